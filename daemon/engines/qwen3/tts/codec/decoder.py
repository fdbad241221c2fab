"""The 12 Hz codec decoder graphs: one window of codes in, its samples out.

A bundle has one ``codec_<T>`` graph per window size T (codes int32
[1, G, T] -> wav [1, 1, samples_per_frame * T]; the codebook lookup, the
transformer, the upsamplers and the final clamp to +-1 are in the graph).
Every layer of upstream's ``Qwen3TTSTokenizerV2Decoder`` is causal (convs
padded on the left, the transformer's sliding window looks back only), so a
window holding fewer than T frames runs right-padded in the same graph and its
first n * samples_per_frame samples are exactly the decode of those n frames
(docs/qwen3.md, codec decoder, measured 1.5e-6).  :mod:`stream` decides which frames go
into which window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import numpy as np

from daemon.engines.qwen3.tts.graphio import codec_io
from daemon.engines.qwen3.tts.params import codec_key
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.bundles.manifest import BundleError

if TYPE_CHECKING:
    from daemon.engines.qwen3.tts.params import TtsParams
    from daemon.sdk.graphs import Runner

_CODEC_KEY: Final = re.compile(r"^codec_(\d+)$")
#: what the padding frames hold: any valid code would do (causal), 0 is one
PAD_CODE: Final = 0


class CodecDecoder:
    """The bundle's ``codec_<T>`` graphs, bound on first use."""

    def __init__(self, p: TtsParams, graphs: Mapping[str, Runner]) -> None:
        self.p = p
        self.groups = p.predictor.groups
        #: codes are indices into this many codebook rows (the predictor vocab)
        self.codebook = p.predictor.vocab
        self.samples_per_frame = p.codec.samples_per_frame
        self._runners: dict[int, Runner] = {}
        for key, runner in graphs.items():
            m = _CODEC_KEY.match(key)
            if m:
                self._runners[int(m.group(1))] = runner
        self._bound: dict[int, BoundGraph] = {}
        self.calls = 0
        #: seconds inside the backend's execute, summed over calls
        self.graph_seconds = 0.0

    @property
    def sizes(self) -> tuple[int, ...]:
        """The window sizes T this bundle has graphs for, ascending."""
        return tuple(sorted(self._runners))

    def require(self, frames: int) -> None:
        """BundleError unless a ``codec_<frames>`` graph exists."""
        if frames not in self._runners:
            raise BundleError(
                f"qwen3-tts: the bundle has no graph {codec_key(frames)!r} "
                f"(codec graphs: {[codec_key(t) for t in self.sizes]})"
            )

    def _graph(self, frames: int) -> BoundGraph:
        graph = self._bound.get(frames)
        if graph is None:
            self.require(frames)
            graph = BoundGraph(self._runners[frames], codec_io(self.p, frames))
            graph.bind()
            self._bound[frames] = graph
        return graph

    def decode(self, codes: np.ndarray, frames: int) -> np.ndarray:
        """float32 samples [n * samples_per_frame] of ``codes`` [n, G]
        (n <= ``frames``) decoded in the ``codec_<frames>`` graph, right-padded."""
        codes = np.asarray(codes)
        n = len(codes)
        if codes.ndim != 2 or codes.shape[1] != self.groups:
            raise ValueError(
                f"codec: codes must be [n, {self.groups}], got {list(codes.shape)}"
            )
        if not 0 < n <= frames:
            raise ValueError(
                f"codec_{frames}: a window holds 1..{frames} frames, got {n}"
            )
        if codes.max() >= self.codebook:
            raise ValueError(
                f"codec: code {int(codes.max())} is outside the codebook "
                f"(0..{self.codebook - 1})"
            )
        graph = self._graph(frames)
        buf = graph.buffers["codes"]
        buf[...] = PAD_CODE
        # upstream's decode clamps codes at 0 (its padding is -1)
        buf[0, :, :n] = np.maximum(codes, 0).T
        graph.execute()
        self.calls += 1
        self.graph_seconds += graph.graph_seconds
        wav = graph.buffers["wav"]
        return np.array(wav[0, 0, : n * self.samples_per_frame], np.float32)
