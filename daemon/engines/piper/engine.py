"""The `piper-vits` engine: Piper (VITS) voices on the NPU behind `Engine`.

Text is phonemized by piper's own espeak-ng phonemizer into pieces (one per
sentence; on static NPU graphs a sentence past the largest encoder bucket is cut
at clauses/words: text.py); each piece runs the graph chain of pipeline.py, and
its audio leaves as piper-tts's would (output.py): a sentence at a time, peak
normalized, on piper's int16 grid, followed by the voice's sentence silence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numpy as np

from daemon.engines.piper.cpu import DurationPredictor
from daemon.engines.piper.output import spoken
from daemon.engines.piper.params import PiperParams, Scales
from daemon.engines.piper.pipeline import PiperGraphs
from daemon.engines.piper.text import Piece, PiperText
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import MAX_SPEED, MIN_SPEED, Capabilities, VoiceInfo
from daemon.sdk.graphs import Runner
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions, TtsEngineBase

ENGINE_ID = "piper-vits"
# Warm-up text: a short sentence that makes espeak-ng load its voice data.
WARMUP_TEXT = "Hello."
#: Piper voices are trained with piper (rhasspy / OHF-Voice); credit it to clients.
PIPER_ATTRIBUTION = ("piper", "https://github.com/OHF-Voice/piper1-gpl")


class PiperModel(NamedTuple):
    """A loaded voice: its graph chain and its phonemizer."""

    graphs: PiperGraphs
    text: PiperText


class PiperEngine(TtsEngineBase[PiperParams, PiperModel]):
    """A Piper voice bundle, loaded; one request at a time (plain, synchronous)."""

    engine_id = ENGINE_ID
    needs = staticmethod(PiperParams.graph_needs)

    @classmethod
    def read_params(cls, bundle: Bundle) -> PiperParams:
        return PiperParams.from_dict(bundle.params, f"{bundle.root}: params")

    def build(
        self, bundle: Bundle, params: PiperParams, graphs: Mapping[str, Runner]
    ) -> PiperModel:
        sdp_path = bundle.path(params.sdp)
        if not sdp_path.is_file():
            raise BundleError(f"{bundle.root}: missing {params.sdp}")
        chain = PiperGraphs(params, graphs, DurationPredictor.load(sdp_path))
        return PiperModel(chain, PiperText(params, chain.max_ids))

    @property
    def params(self) -> PiperParams:
        return self.model.graphs.params

    def voices(self) -> list[VoiceInfo]:
        name = self.bundle.name
        credit = self.params.attribution or PIPER_ATTRIBUTION
        return [self.voice(f"Piper VITS voice {name}", credit)]

    def capabilities(self) -> Capabilities:
        """One speaker; any speed in range (length_scale / speed, params.py)."""
        b = self.bundle
        return Capabilities(
            task="tts",
            languages=tuple(b.languages),
            sample_rate_out=b.sample_rate,
            speed_range=(MIN_SPEED, MAX_SPEED),
            streaming=True,
            max_input=MAX_TEXT_CHARS,
            sentence_pause_s=self.params.sentence_silence,
        )

    def warmup(self) -> None:
        graphs, text = self.model
        text.pieces(WARMUP_TEXT)
        graphs.warmup()

    def pieces(self, text: str) -> list[Piece]:
        """The phoneme-id pieces `synthesize` would speak, in order."""
        return self.model.text.pieces(text)

    def speak(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        """A segment per sentence: whole once it is decoded (normalize_audio),
        else each decoder window as soon as it is done."""
        graphs, phonemizer = self.model
        scales = Scales.for_request(graphs.params, options.speed, options.extra)
        # Validate everything before the first graph call, so bad input never
        # leaves a request half-spoken.
        pieces = phonemizer.pieces(text)
        return self._stream(pieces, scales, np.random.default_rng(options.seed), cancel)

    def _stream(
        self,
        pieces: list[Piece],
        scales: Scales,
        rng: np.random.Generator,
        cancel: CancelToken | None,
    ) -> Iterator[AudioChunk]:
        graphs = self.model.graphs
        last = len(pieces) - 1
        parts = (
            # No pause after the last piece: it would only delay the end.
            (piece, piece.pause_s if i < last else 0.0, graphs.stream(
                piece.ids, scales, rng, cancel))
            for i, piece in enumerate(pieces)
        )  # fmt: skip
        return spoken(parts, self.sample_rate, scales.normalize_audio)
