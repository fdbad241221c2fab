"""The ``qwen3-asr`` engine: Qwen3-ASR speech recognition on the NPU.

A bundle built by ``scripts/build-qwen3-asr`` holds the ``encoder`` window graph, the
``prefill_<P>`` and ``decode_<L>`` graphs (params.py), the token embeddings and
the tokenizer.  Each session (session.py) normalises its audio as upstream
does, encodes windows while audio streams in, cuts long audio at pauses and
decodes each segment greedily (or sampled, through daemon/sdk/ar), streaming
the text as tokens decode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import numpy as np

from daemon.engines.qwen3.asr.decoder import Decoder
from daemon.engines.qwen3.asr.encoder import WindowEncoder
from daemon.engines.qwen3.asr.model import Model
from daemon.engines.qwen3.asr.options import Request
from daemon.engines.qwen3.asr.params import (
    EMBED_TOKENS,
    ENCODER,
    ENGINE_ID,
    TOKENIZER,
    AsrParams,
    graph_needs,
)
from daemon.engines.qwen3.asr.prompt import PromptBuilder, language_code
from daemon.engines.qwen3.asr.session import Qwen3AsrSession
from daemon.sdk.asr import TranscriptionOptions
from daemon.sdk.base import EngineBase
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities, VoiceInfo
from daemon.sdk.graphs import Runner

#: The longest stream a session takes (s): none.  Long audio is cut at pauses
#: into segments the graphs hold, and a session keeps one segment's audio at a
#: time, so what bounds a request is the service's ``limits.max_audio_s``.
MAX_AUDIO_S: Final = math.inf
ATTRIBUTION: Final = ("Qwen3-ASR", "https://github.com/QwenLM/Qwen3-ASR")
#: Warm-up input: 1.5 s of a quiet tone (a window's worth on tiny models).
WARMUP_S: Final = 1.5
WARMUP_HZ: Final = 440.0
WARMUP_LEVEL: Final = 0.1


class Qwen3AsrEngine(EngineBase[AsrParams, Model]):
    """A Qwen3-ASR bundle, loaded; one session at a time (synchronous).  Its
    ``model`` is what the parity tests drive on whole clips."""

    engine_id = ENGINE_ID
    task = "asr"
    params_type = AsrParams
    needs = staticmethod(graph_needs)

    def build(
        self, bundle: Bundle, p: AsrParams, graphs: Mapping[str, Runner]
    ) -> Model:
        from tokenizers import Tokenizer

        embed = np.load(bundle.path(EMBED_TOKENS), mmap_mode="r")
        if embed.shape != (p.vocab, p.hidden):
            raise BundleError(
                f"{bundle.root}: {EMBED_TOKENS} is {list(embed.shape)}, "
                f"params say [{p.vocab}, {p.hidden}]"
            )
        tokenizer = Tokenizer.from_file(str(bundle.path(TOKENIZER)))
        try:
            builder = PromptBuilder(p, tokenizer, embed)
        except ValueError as exc:
            raise BundleError(f"{bundle.root}: {exc}") from None
        encoder = WindowEncoder(p, graphs[ENCODER])
        decoder = Decoder(p, embed, graphs)
        return Model(p, tokenizer, builder, encoder, decoder)

    @property
    def languages(self) -> tuple[str, ...]:
        """Codes of the languages the model knows ("zh", "en", ...)."""
        return tuple(language_code(n) for n in self.model.p.languages)

    def voices(self) -> list[VoiceInfo]:
        description = f"Qwen3-ASR ({self.bundle.name})"
        return [self.voice(description, ATTRIBUTION, languages=self.languages)]

    def capabilities(self) -> Capabilities:
        return Capabilities(
            task="asr",
            languages=self.languages,
            speed_range=None,
            streaming=True,
            max_input=MAX_AUDIO_S,
        )

    def open(
        self, options: TranscriptionOptions, cancel: CancelToken | None = None
    ) -> Qwen3AsrSession:
        """A session; ValueError for options this engine refuses."""
        request = Request.from_options(options, self.model.p)
        return Qwen3AsrSession(self.model, request, cancel)

    def warmup(self) -> None:
        """Every graph once: a short tone through a whole session, then every
        prefill and KV bucket."""
        rate = self.model.p.mel.sampling_rate
        t = np.arange(round(WARMUP_S * rate)) / rate
        tone = (WARMUP_LEVEL * np.sin(2 * np.pi * WARMUP_HZ * t)).astype(np.float32)
        session = self.open(TranscriptionOptions(extra={"max_new_tokens": 1}))
        try:
            for _ in session.feed(tone, rate):
                pass
            for _ in session.finish():
                pass
        finally:
            session.close()
        self.model.decoder.warmup()
