"""Fixed-length K/V caches bound into a decode graph, and length buckets.

A decode graph (GPT-SoVITS ``t2s_decode_L``; Qwen3 ``asr_decode`` /
``tts_talker_decode``, docs/qwen3.md, graph set) reads the caches
``k_cache``/``v_cache`` [..., L, head_dim] and an additive mask row [..., L],
and returns the new token's ``k_new``/``v_new`` [..., n, head_dim] next to its
other outputs. The caches are bound once, zero-copy; after a step the new rows
are written in place at ``pos`` and ``pos`` is opened in the mask, so the next
step sees them without any buffer being reallocated or re-bound.

One graph per cache length (a bucket): a short request runs the smallest that
fits; :meth:`KvBuckets.grow` moves a request to a larger one mid-decode,
contents kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from daemon.sdk.ar import masks
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.graphs import Runner

#: the position axis of every cache and new-row tensor: [..., positions, head_dim]
POS_AXIS = -2


class CapacityError(ValueError):
    """The work does not fit the static graphs (the caller may split it)."""


@dataclass(frozen=True)
class KvNames:
    """Tensor names of a decode graph's cache I/O."""

    k_cache: str = "k_cache"
    v_cache: str = "v_cache"
    k_new: str = "k_new"
    v_new: str = "v_new"
    mask: str = "mask"


def _rows(a: np.ndarray, start: int, stop: int) -> np.ndarray:
    return a[..., start:stop, :]


class KvGraph(BoundGraph):
    """A decode graph with its K/V caches of ``length`` positions, bound once.

    ``filled`` positions are valid (and visible in the mask); the rest are zero,
    so no request's output depends on what an earlier one left behind.
    """

    def __init__(
        self,
        runner: Runner,
        shapes: Mapping[str, tuple[int, ...]],
        length: int,
        mask_value: float,
        names: KvNames = KvNames(),
    ) -> None:
        super().__init__(runner, shapes)
        self.length = length
        self.names = names
        self.mask_value = np.float32(mask_value)
        self.filled = 0

    @property
    def k(self) -> np.ndarray:
        return self.bind()[self.names.k_cache]

    @property
    def v(self) -> np.ndarray:
        return self.bind()[self.names.v_cache]

    @property
    def mask(self) -> np.ndarray:
        return self.bind()[self.names.mask]

    def start(self, k: np.ndarray, v: np.ndarray, filled: int) -> None:
        """Load the first ``filled`` positions of ``k``/``v`` (a prefill's, or a
        smaller bucket's) and clear the rows an earlier request left."""
        if filled > self.length:
            raise CapacityError(f"{filled} positions exceed KV bucket {self.length}")
        stale = max(self.filled, filled)
        for cache, new in ((self.k, k), (self.v, v)):
            _rows(cache, 0, filled)[...] = _rows(new, 0, filled)
            _rows(cache, filled, stale)[...] = 0
        masks.open_prefix(self.mask, filled, self.mask_value)
        self.filled = filled

    def write(self, pos: int, k_new: np.ndarray, v_new: np.ndarray) -> None:
        """Rows ``pos .. pos + n`` of the caches := ``k_new``/``v_new``
        [..., n, dh], in place, and open them in the mask."""
        n = k_new.shape[POS_AXIS]
        if pos + n > self.length:
            raise CapacityError(f"KV bucket {self.length} is full")
        _rows(self.k, pos, pos + n)[...] = k_new
        _rows(self.v, pos, pos + n)[...] = v_new
        self.mask[..., pos : pos + n] = 0.0
        self.filled = max(self.filled, pos + n)

    def reorder(self, sources: np.ndarray, axis: int = 1) -> None:
        """Beam search: along ``axis`` (the beams, [layers, beams, ...]), row i
        of the filled positions := row ``sources[i]``'s. Only rows whose source
        changes are copied (a beam's cache is ~120 KB a position at full size)."""
        sources = np.asarray(sources)
        moved = np.flatnonzero(sources != np.arange(len(sources)))
        if not len(moved):
            return
        for cache in (self.k, self.v):
            filled = np.moveaxis(_rows(cache, 0, self.filled), axis, 0)
            filled[moved] = filled[sources[moved]]  # the right side is a copy

    def step(self) -> None:
        """Execute on the bound inputs the caller wrote (``x``, positions...),
        then append the step's own k/v at ``filled``."""
        if self.filled >= self.length:
            raise CapacityError(f"KV bucket {self.length} is full")
        b = self.buffers
        self.execute()
        # The step attended to rows < filled plus its own k/v (in-graph); they
        # become row ``filled`` for the steps after it.
        self.write(self.filled, b[self.names.k_new], b[self.names.v_new])


class KvBuckets(Mapping[int, KvGraph]):
    """The decode graphs of one model by cache length, shortest first."""

    def __init__(self, graphs: Mapping[int, KvGraph]) -> None:
        if not graphs:
            raise ValueError("no KV bucket")
        self._graphs = dict(sorted(graphs.items()))
        self.largest = max(self._graphs)

    def __getitem__(self, length: int) -> KvGraph:
        return self._graphs[length]

    def __iter__(self) -> Iterator[int]:
        return iter(self._graphs)

    def __len__(self) -> int:
        return len(self._graphs)

    def for_positions(self, positions: int) -> KvGraph:
        """The smallest bucket that holds ``positions``."""
        for length, graph in self._graphs.items():
            if positions <= length:
                return graph
        raise CapacityError(
            f"{positions} KV positions exceed the largest bucket {self.largest}"
        )

    def grow(self, current: KvGraph, positions: int) -> KvGraph:
        """``current`` if it holds ``positions``, else the smallest bucket that
        does, holding ``current``'s filled rows (copied once, then bound there)."""
        if positions <= current.length:
            return current
        bigger = self.for_positions(positions)
        bigger.start(current.k, current.v, current.filled)
        return bigger
