"""The ``indextts2`` engine: IndexTTS-2 on the NPU, zero-shot voices with
emotion control, as upstream's ``infer`` speaks them.

A request's text goes through upstream's front end (text/), is cut into
segments, and each segment is spoken on the graphs (segment.py): beam
sampling on the GPT's logits, the latent pass, the flow matching, BigVGAN's
windows, each window's audio yielded as it is decoded, with upstream's
200 ms between segments.  Speaking needs a cloned voice (clone.py); every
random number of a request comes from one NumPy generator (its seed).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
from daemon.sdk.ar.draws import request_rng
from daemon.sdk.audio.shaping import INT16_MAX
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities, VoiceInfo
from daemon.sdk.cloning import CloningEngine
from daemon.sdk.graphs import Runner
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions, TtsEngineBase

from hexvoice_indextts.engine.clone import (
    MAX_SECONDS,
    TAKEN_SECONDS,
    IndexCloner,
    model_id,
)
from hexvoice_indextts.engine.params import ENGINE_ID, LICENSE, Params, graph_needs
from hexvoice_indextts.engine.request import Request
from hexvoice_indextts.gpt.generate import Sampling
from hexvoice_indextts.layout import segment_room, voice_graph_names
from hexvoice_indextts.segment import Draws, NumpyDraws, Segment
from hexvoice_indextts.tables import (
    TABLES_FILE,
    VOICE_TABLES_FILE,
    UtteranceTables,
    VoiceTables,
    segment_graphs,
    voice_maker,
)  # fmt: skip
from hexvoice_indextts.text.normalize import GLOSSARY_FILE, Normalizer, read_glossary
from hexvoice_indextts.text.tokens import Tokenizer
from hexvoice_indextts.utterance import SILENCE_MS, Utterance
from hexvoice_indextts.voice.maker import EmotionMatrices, emotion_for

log = logging.getLogger(__name__)

ATTRIBUTION: Final = ("IndexTTS-2 (bilibili)", "https://github.com/index-tts/index-tts")
BPE_FILE: Final = "text/bpe.model"
GRAMMARS: Final = "text/nemo"
#: w2v-BERT rows and CAM++ fbank frames per second of 16 kHz clip
ROWS_PER_SECOND: Final = 50
FBANK_PER_SECOND: Final = 100


@dataclass(frozen=True)
class Loaded:
    params: Params
    utterance: Utterance
    cloner: IndexCloner
    matrices: EmotionMatrices


def clip_seconds(p: Params, hop: int, rate: int) -> float:
    """The longest clip the per-voice buckets hold: upstream's 15 s cut when
    they hold it (a longer clip is then cut as upstream cuts it), else what
    fits, one row short of the largest buckets."""
    v = p.voice
    fits = min(
        (max(v.rows) - 1) / ROWS_PER_SECOND,
        (max(v.fbank) - 2) / FBANK_PER_SECOND,
        (max(v.mel) - 1) * hop / rate,
    )
    return MAX_SECONDS if fits >= TAKEN_SECONDS else math.floor(fits * 10) / 10


class IndexTtsEngine(TtsEngineBase[Params, Loaded], CloningEngine):
    engine_id = ENGINE_ID
    params_type = Params
    needs = staticmethod(graph_needs)
    license = LICENSE
    no_cloner = "this bundle has no per-voice graphs"

    def build(self, bundle: Bundle, p: Params, graphs: Mapping[str, Runner]) -> Loaded:
        root = bundle.root
        tables = UtteranceTables.load(root / TABLES_FILE)
        vt = VoiceTables.load(root / VOICE_TABLES_FILE)
        glossary = root / "text" / GLOSSARY_FILE
        try:
            normalizer = Normalizer(
                root / GRAMMARS, p.language,
                read_glossary(glossary) if glossary.is_file() else None,
            )  # fmt: skip
            normalizer.load()
        except ImportError as exc:
            raise BundleError(
                f"{root}: IndexTTS-2's text normaliser needs nemo-text-processing "
                f"(pynini), which is not installed here: {exc}"
            ) from None
        segment = Segment(segment_graphs(graphs, tables), Sampling())
        pieces = min(p.segment_pieces, segment_room(p.utterance))
        if pieces < 1:
            raise BundleError(f"{root}: the GPT's buckets hold no text")
        if pieces < p.segment_pieces:  # upstream cuts at 120; these graphs hold fewer
            log.warning("%s: segments of at most %d pieces (the GPT's buckets)",
                        root, pieces)  # fmt: skip
        utterance = Utterance(Tokenizer(root / BPE_FILE, normalizer), segment, pieces)
        pre = vt.preprocess
        cloner = IndexCloner(
            voice_maker(graphs, tables.codebook, vt),
            model_id(bundle.graphs, voice_graph_names(p.voice)),
            clip_seconds(p, int(pre["hop_length"]), int(pre["sr"])),
        )
        matrices = EmotionMatrices.split(vt.emo_matrix, vt.spk_matrix, vt.emo_num)
        return Loaded(p, utterance, cloner, matrices)

    def voices(self) -> list[VoiceInfo]:
        said = f"IndexTTS-2 ({self.bundle.name}); speaks in cloned voices"
        return [self.voice(said, ATTRIBUTION)]

    def capabilities(self) -> Capabilities:
        return Capabilities(
            task="tts",
            languages=tuple(self.bundle.languages),
            sample_rate_out=self.bundle.sample_rate,
            speed_range=None,
            streaming=True,
            max_input=MAX_TEXT_CHARS,
            cloning=self.model.cloner.capability,
            sentence_pause_s=SILENCE_MS / 1000,
        )

    def cloner(self) -> IndexCloner:
        return self.model.cloner

    def warmup(self) -> None:
        """The text front end once (NeMo's grammars load lazily)."""
        self.model.utterance.tokenizer.pieces("Hello, 1 2 3.")

    def draws(self, seed: int | None) -> Draws:
        """A request's random numbers: one NumPy generator (its seed).  The
        parity tests put torch's stream here, upstream's draws."""
        return NumpyDraws(request_rng(seed))

    def speak(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        m = self.model
        req = Request.from_options(options)
        segments = m.utterance.segments(text)  # ValueError: nothing to say
        emotion = emotion_for(
            req.voice, m.matrices, req.emo_alpha, None, req.emo_vector
        )
        return self._stream(segments, req, emotion, cancel)

    def _stream(
        self, segments: list[list[int]], req: Request, emotion: np.ndarray,
        cancel: CancelToken | None,
    ) -> Iterator[AudioChunk]:  # fmt: skip
        rate = self.sample_rate
        draws = self.draws(req.seed)
        rows = req.voice.rows(emotion)
        speak = self.model.utterance.speak
        for piece in speak(segments, rows, draws, cancel, req.sampling):
            # upstream's int16 value q as q / 32767: the shared to_int16 gives q back
            audio = piece.pcm.astype(np.float32) / np.float32(INT16_MAX)
            yield AudioChunk(audio, rate, piece.segment, piece.end_of_segment)
