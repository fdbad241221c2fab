"""The `piper-vits` engine: Piper (VITS) voices on the NPU behind `Engine`.

Text is phonemized by piper's own espeak-ng phonemizer into pieces (one per
sentence; on static NPU graphs a sentence past the largest encoder bucket is cut
at clauses/words: text.py); each piece runs the graph chain of pipeline.py, and
its audio leaves as piper-tts's would (output.py): a sentence at a time, peak
normalized, on piper's int16 grid, followed by the voice's sentence silence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.piper.cpu import DurationPredictor
from daemon.engines.piper.output import spoken
from daemon.engines.piper.params import PiperParams, Scales
from daemon.engines.piper.pipeline import PiperGraphs
from daemon.engines.piper.text import Piece, PiperText
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import MAX_SPEED, MIN_SPEED, Capabilities, VoiceInfo
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions

if TYPE_CHECKING:
    from daemon.sdk.bundles.needs import GraphNeeds
    from daemon.sdk.graphs import Runner

ENGINE_ID = "piper-vits"
# Warm-up text: a short sentence that makes espeak-ng load its voice data.
WARMUP_TEXT = "Hello."
#: Piper voices are trained with piper (rhasspy / OHF-Voice); credit it to clients.
PIPER_ATTRIBUTION = ("piper", "https://github.com/OHF-Voice/piper1-gpl")


class PiperEngine:
    """A Piper voice bundle, loaded; one request at a time (plain, synchronous)."""

    engine_id = ENGINE_ID
    task = "tts"

    def __init__(self) -> None:
        self._bundle: Bundle | None = None
        self._graphs: PiperGraphs | None = None
        self._text: PiperText | None = None

    @classmethod
    def requirements(cls, bundle: Bundle) -> GraphNeeds:
        params = PiperParams.from_dict(bundle.params, f"{bundle.root}: params")
        return params.graph_needs()

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        if bundle.engine != ENGINE_ID:
            raise BundleError(
                f"{bundle.root}: engine {bundle.engine!r}, not {ENGINE_ID!r}"
            )
        params = PiperParams.from_dict(bundle.params, f"{bundle.root}: params")
        sdp_path = bundle.path(params.sdp)
        if not sdp_path.is_file():
            raise BundleError(f"{bundle.root}: missing {params.sdp}")
        sdp = DurationPredictor.load(sdp_path)
        self._graphs = PiperGraphs(params, graphs, sdp)
        self._text = PiperText(params, self._graphs.max_ids)
        self._bundle = bundle

    @property
    def params(self) -> PiperParams:
        return self._loaded()[0].params

    @property
    def sample_rate(self) -> int:
        if self._bundle is None:
            raise RuntimeError("piper-vits engine: load() a bundle first")
        return self._bundle.sample_rate

    def voices(self) -> list[VoiceInfo]:
        self._loaded()
        assert self._bundle is not None
        return [
            VoiceInfo(
                name=self._bundle.name,
                languages=self._bundle.languages,
                description=f"Piper VITS voice {self._bundle.name}",
                attribution=self.params.attribution or PIPER_ATTRIBUTION,
            )
        ]

    def capabilities(self) -> Capabilities:
        """One speaker; any speed in range (length_scale / speed, params.py)."""
        self._loaded()
        assert self._bundle is not None
        return Capabilities(
            task="tts",
            languages=tuple(self._bundle.languages),
            sample_rate_out=self._bundle.sample_rate,
            speed_range=(MIN_SPEED, MAX_SPEED),
            streaming=True,
            max_input=MAX_TEXT_CHARS,
            sentence_pause_s=self.params.sentence_silence,
        )

    def warmup(self) -> None:
        graphs, text = self._loaded()
        text.pieces(WARMUP_TEXT)
        graphs.warmup()

    def pieces(self, text: str) -> list[Piece]:
        """The phoneme-id pieces `synthesize` would speak, in order."""
        return self._loaded()[1].pieces(text)

    def synthesize(
        self,
        text: str,
        options: SynthesisOptions | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[AudioChunk]:
        """A segment per sentence: whole once it is decoded (normalize_audio),
        else each decoder window as soon as it is done."""
        options = options or SynthesisOptions()
        graphs, phonemizer = self._loaded()
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
        graphs, _ = self._loaded()
        last = len(pieces) - 1
        parts = (
            # No pause after the last piece: it would only delay the end.
            (piece, piece.pause_s if i < last else 0.0, graphs.stream(
                piece.ids, scales, rng, cancel))
            for i, piece in enumerate(pieces)
        )  # fmt: skip
        return spoken(parts, self.sample_rate, scales.normalize_audio)

    def stream_ids(
        self,
        ids: list[int],
        scales: Scales,
        rng: np.random.Generator,
        cancel: CancelToken | None = None,
    ) -> Iterator[np.ndarray]:
        """Raw audio (as the vocoder made it) of phoneme ids: for oracle tests
        and benchmarks."""
        return self._loaded()[0].stream(ids, scales, rng, cancel)

    def close(self) -> None:
        self._graphs = self._text = None
        self._bundle = None

    def _loaded(self) -> tuple[PiperGraphs, PiperText]:
        if self._graphs is None or self._text is None:
            raise RuntimeError("piper-vits engine: load() a bundle first")
        return self._graphs, self._text
