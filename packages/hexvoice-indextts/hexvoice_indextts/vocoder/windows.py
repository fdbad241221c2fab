"""A segment's mel through BigVGAN's window graphs (one per window size),
as daemon/sdk/audio/windows.py cuts it: every kept frame has at least the
overlap (>= BigVGAN's receptive radius, checked from its config) of real
context on each side that is not the segment's edge, a window that would run
past the end is moved back to end there, and a segment shorter than the
window is padded, the graph's mask and replication index making it the
segment's own decode. Each window's kept audio is yielded as soon as it is
decoded (``cancel`` checked before each graph call)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from daemon.sdk.audio.windows import windows

from hexvoice_indextts.voice.frames import replicate_edges

if TYPE_CHECKING:
    from daemon.sdk.ar.loop import Checkpoint
    from daemon.sdk.graphs import Runner


#: a radius computed as a whole number of frames may carry float rounding
RADIUS_SLACK = 1e-9


def config_radius(h: Mapping[str, object]) -> float:
    """BigVGAN's receptive radius in frames from its config.json (build side:
    scripts/common/receptive_field.py)."""
    from scripts.common.receptive_field import bigvgan_radius

    return bigvgan_radius(
        h["upsample_rates"],  # type: ignore[arg-type]
        h["upsample_kernel_sizes"],  # type: ignore[arg-type]
        h["resblock_kernel_sizes"],  # type: ignore[arg-type]
        h["resblock_dilation_sizes"],  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Vocoder:
    graphs: Mapping[int, Runner]  # by window frames
    rates: Sequence[int]  # upsample_rates (their product: samples per frame)
    overlap: int

    @classmethod
    def from_config(
        cls,
        graphs: Mapping[int, Runner],
        h: Mapping[str, object],
        overlap: int,
        radius: float | None = None,
    ) -> Vocoder:
        """Refuses an overlap under the receptive radius (frames) of the
        config ``h``: ``radius`` as the build computed it (a bundle's tables;
        the engine has no build code), else from ``h`` here."""
        if radius is None:
            radius = config_radius(h)
        if overlap < math.ceil(radius - RADIUS_SLACK):
            raise ValueError(
                f"BigVGAN: window overlap {overlap} frames is less than its "
                f"receptive radius {radius:.2f} frames"
            )
        return cls(graphs, tuple(h["upsample_rates"]), overlap)  # type: ignore[call-overload]

    @property
    def hop(self) -> int:
        return int(np.prod(self.rates))

    def stream(
        self, mel: np.ndarray, cancel: Checkpoint | None = None
    ) -> Iterator[np.ndarray]:
        """float32 audio [samples] per window of ``mel`` [80, frames]."""
        sizes = sorted(self.graphs)
        n, hop = mel.shape[1], self.hop
        for w in windows(n, sizes[-1], self.overlap, sizes=sizes[:-1]):
            if cancel is not None:
                cancel.check()
            real = w.stop - w.start
            x = np.zeros((1, mel.shape[0], w.size), np.float32)
            x[0, :, :real] = mel[:, w.start : w.stop]
            mask = np.zeros((1, w.size * hop), np.float32)
            mask[0, : real * hop] = 1.0
            feeds = {
                "mel": x,
                "mask": mask,
                "edges": replicate_edges(real, w.size, self.rates),
            }
            audio = self.graphs[w.size].run(feeds)[0].reshape(-1)
            yield audio[w.keep_from * hop : w.keep_to * hop]
