"""The ``gpt-sovits-v2pro`` engine: GPT-SoVITS v2Pro voices on the NPU.

Per segment of the frontend's split (≤ 30 spoken chars, docs/board.md, sentences, pauses
and fades): phonemize (g2pw graph for polyphones) -> BERT features (bert graph) -> T2S
prefill + decode loop (t2s.py) -> vits_enc -> vits_gen windows, each window's
audio yielded as soon as it is done, faded at the segment's edges and followed
by its pause. A segment that reaches the token cap without EOS, or does not fit
a static graph, is re-split at its most natural midpoint and both halves are
synthesized instead: nothing is truncated. One ``np.random.Generator`` per
request (T2S draws, then the VITS noise, segment by segment) makes a seeded
request reproducible.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from daemon.engines.gptsovits.cloning.clone import Cloner, load_cloner
from daemon.engines.gptsovits.cloning.voiceprint import reference_of
from daemon.engines.gptsovits.frontend import Phonemes, Segment
from daemon.engines.gptsovits.layout import ENGINE_ID, GsvParams, graph_needs
from daemon.engines.gptsovits.loaded import EngineStats, Loaded
from daemon.engines.gptsovits.options import Request, default_sampling
from daemon.engines.gptsovits.pcm import on_int16_grid
from daemon.engines.gptsovits.sampling import TokenSampler
from daemon.engines.gptsovits.speed import SPEED_RANGE
from daemon.engines.gptsovits.t2s import T2S, CapacityError
from daemon.engines.gptsovits.tables import CpuTables, load_references
from daemon.engines.gptsovits.text import build_text
from daemon.engines.gptsovits.vits import Vits
from daemon.sdk.ar.draws import request_rng
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, SENTENCE_PAUSE_S, shaped_segment
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.bundles.needs import GraphNeeds
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities, VoiceInfo
from daemon.sdk.cloning import CloningEngine
from daemon.sdk.graphs import Runner
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions, TtsEngineBase

log = logging.getLogger(__name__)

PAUSES = {"sentence": SENTENCE_PAUSE_S, "comma": COMMA_PAUSE_S}
#: GPT-SoVITS voices are trained with its upstream; credit it to clients.
GSV_ATTRIBUTION = ("GPT-SoVITS", "https://github.com/RVC-Boss/GPT-SoVITS")
# Upstream ("bad zero prediction"): an empty token sequence becomes one 0 token.
EMPTY_FALLBACK_TOKEN = 0


@dataclass(frozen=True)
class _Tokens:
    """What one T2S attempt gave: tokens, or the halves to do instead."""

    phonemes: Phonemes
    tokens: np.ndarray | None = None
    halves: tuple[Segment, Segment] | None = None


class GptSovitsEngine(TtsEngineBase[GsvParams, Loaded], CloningEngine):
    """A GPT-SoVITS v2Pro bundle, loaded; one request at a time (synchronous)."""

    engine_id = ENGINE_ID
    params_type = GsvParams
    no_cloner = "this bundle has no reference graphs"

    def __init__(self) -> None:
        super().__init__()
        self.stats = EngineStats()

    @classmethod
    def graph_needs(cls, params: GsvParams, graphs: Mapping[str, Any]) -> GraphNeeds:
        return graph_needs(params, graphs)

    def build(
        self, bundle: Bundle, p: GsvParams, graphs: Mapping[str, Runner]
    ) -> Loaded:
        tables = CpuTables.load(bundle, p)
        voices = load_references(bundle, p)
        text = build_text(bundle, graphs, p)
        t2s, vits = T2S(p, tables, graphs), Vits(p, tables, graphs)
        for ref in voices.values():
            vits.check_reference(ref)
        cap = min(p.max_new_tokens, vits.max_tokens)
        # A full prefill plus a segment at the token cap must fit the largest
        # cache and the position table, or long segments could never finish.
        need = p.prefill_len + cap
        if need > p.kv_buckets[-1] or need > tables.positions:
            raise BundleError(
                f"{bundle.root}: prefill {p.prefill_len} + {cap} tokens exceed the "
                f"largest KV bucket {p.kv_buckets[-1]} or the "
                f"{tables.positions}-row position table"
            )
        cloner = load_cloner(bundle, p, graphs, text, t2s, tables.codebook)
        return Loaded(bundle, p, voices, text, t2s, vits, cloner)

    @property
    def loaded(self) -> Loaded:
        """The loaded bundle's parts (the engine's model)."""
        return self.model

    @property
    def token_cap(self) -> int:
        s = self.loaded
        return min(s.params.max_new_tokens, s.vits.max_tokens)

    @property
    def default_voice(self) -> str:
        s = self.loaded
        return s.bundle.name if s.bundle.name in s.voices else next(iter(s.voices))

    def voices(self) -> list[VoiceInfo]:
        name = self.bundle.name
        return [
            self.voice(f"GPT-SoVITS v2Pro voice {v!r} ({name})", GSV_ATTRIBUTION, v)
            for v in self.loaded.voices
        ]

    def capabilities(self) -> Capabilities:
        """Voices are references, not speakers.  Speed: upstream's range
        (speed.py) when the vits_enc graph takes a stretch matrix; a bundle
        built before that speaks at 1.0 only (the edge refuses others)."""
        s = self.loaded
        cloning = None if s.cloner is None else s.cloner.capability
        return Capabilities(
            task="tts",
            languages=tuple(s.bundle.languages),
            sample_rate_out=s.bundle.sample_rate,
            speed_range=SPEED_RANGE if s.vits.speeds else None,
            streaming=True,
            max_input=MAX_TEXT_CHARS,
            cloning=cloning,
        )

    def cloner(self) -> Cloner | None:
        """Zero-shot voices from a clip and its transcript (cloning/clone.py)."""
        return self.loaded.cloner

    def warmup(self) -> None:
        """Every graph once, and the frontend's lazily loaded tables."""
        s = self.loaded
        s.text.warmup()
        s.t2s.warmup()
        ref = s.voices[self.default_voice]
        sampling = default_sampling(s.params)
        rng = request_rng(0)
        TokenSampler(sampling, s.params.vocab, ref.prompt, rng).warmup()
        s.vits.warmup(s.voices[self.default_voice])
        if s.cloner is not None:
            s.cloner.warmup()

    def speak(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        """Chunks as soon as each vocoder window is done; a segment per piece."""
        s = self.loaded
        req = Request.from_options(
            options, s.params, s.voices, self.default_voice, self.token_cap
        )
        if options.voice_print is not None:  # it speaks with its own reference
            model = None if s.cloner is None else s.cloner.model_id
            req = replace(req, voice=reference_of(options.voice_print, s.params, model))
        t0 = time.perf_counter()
        segments = s.text.split(text)  # ValueError for empty text
        self.stats.frontend_seconds += time.perf_counter() - t0
        return self._stream(segments, req, cancel)

    def _stream(
        self, segments: list[Segment], req: Request, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        s = self.loaded
        rate = self.sample_rate
        rng = request_rng(req.seed)  # T2S draws, then the VITS noise
        pending = deque(segments)
        index = 0
        while pending:
            segment = pending.popleft()
            got = self._tokens(segment, req, rng, cancel)
            if got.tokens is None:
                assert got.halves is not None
                pending.extendleft(reversed(got.halves))
                continue
            ids = got.phonemes.phone_ids
            log.debug(
                "segment %d %r (%s): %d tokens",
                index,
                segment.text,
                segment.end,
                len(got.tokens),
            )
            z = s.vits.encode(got.tokens, ids, req.voice, rng, cancel, req.speed)
            # No pause after the last segment: it would only delay the end.
            pause = PAUSES[segment.end] if pending else 0.0
            raw = s.vits.generate(z, req.voice, cancel)
            for chunk in shaped_segment(raw, rate, index, pause):
                # upstream's int16 values, whatever protocol writes them (pcm.py)
                yield replace(chunk, audio=on_int16_grid(chunk.audio))
            self.stats.segments += 1
            index += 1

    def _tokens(
        self,
        segment: Segment,
        req: Request,
        rng: np.random.Generator,
        cancel: CancelToken | None,
    ) -> _Tokens:
        s = self.loaded
        ref = req.voice
        t0 = time.perf_counter()
        phonemes = s.text.phonemize(segment.text, cancel)
        self.stats.frontend_seconds += time.perf_counter() - t0
        phones = np.concatenate([ref.phones, phonemes.phone_ids])
        try:
            s.vits.check_fits(len(phonemes.phones), 1)
            s.text.check_fits(phonemes)
            s.t2s.check_fits(len(phones), len(ref.prompt), req.max_tokens)
        except CapacityError as exc:
            halves = self._halves(segment)
            if halves is None:
                raise ValueError(
                    f"{ENGINE_ID}: cannot synthesize {segment.text!r}: {exc}"
                ) from exc
            log.info("re-splitting %r: %s", segment.text, exc)
            return _Tokens(phonemes, halves=halves)
        bert = np.concatenate([ref.bert, s.text.bert_features(phonemes, cancel)])
        sampler = TokenSampler(req.sampling, s.params.vocab, ref.prompt, rng)
        result = s.t2s.generate(
            phones, bert, ref.prompt, sampler, req.max_tokens, cancel
        )
        if result.capped:
            halves = self._halves(segment)
            if halves is not None:
                log.info(
                    "segment %r reached %d tokens without EOS: re-splitting",
                    segment.text,
                    req.max_tokens,
                )
                return _Tokens(phonemes, halves=halves)
            # One spoken char that never ends is a model failure, not a long
            # text: its capped audio is all there is to say.
            log.warning(
                "segment %r reached %d tokens without EOS and cannot be split",
                segment.text,
                req.max_tokens,
            )
            self.stats.kept_capped += 1
        tokens = result.tokens
        if tokens.size == 0:
            tokens = np.array([EMPTY_FALLBACK_TOKEN], np.int64)
        return _Tokens(phonemes, tokens=tokens)

    def _halves(self, segment: Segment) -> tuple[Segment, Segment] | None:
        try:
            halves = self.loaded.text.split_in_half(segment)
        except ValueError:
            return None
        self.stats.resplits += 1
        return halves
