"""Overlapped windows for running a vocoder (or any conv stack) in pieces.

A graph decodes a window of frames at a time. Each window after the first
starts `overlap` frames before the first frame it keeps, and each window keeps
all but its last `overlap` frames, so every kept frame saw at least `overlap`
real frames of context on every side that is not a sequence edge; the cut is
hard (no cross-fade). With `overlap` at least the vocoder's receptive field
(scripts/common/receptive_field.py) the stitched audio equals a whole-sequence
decode to float rounding.

Sizes: the first window may be smaller than the rest (`first`), so the first
audio leaves after a short decode while the steady state runs fewer, larger
windows (less recompute: window / (window - 2 * overlap) frames computed per
frame kept).

A static build may compile several window sizes (`sizes`): then after the first
window each call picks the size that computes the fewest frames for what remains
(`plan`): the steady `window` while much remains, and the smallest size that
covers the remainder for the tail, so the last window is not a padded or
clamped-back copy of the large one.

Static graphs (the NPU) take exactly `size` frames. A window that would run past
the sequence end is clamped back to end there (zero padding gave visible errors
over the edge frames, docs/board.md, vocoder windows); a sequence shorter than the
window gets one window padded with zeros plus a frame mask (1 = real frame) that
the decoder graph uses to zero its padded positions after every conv, which
makes the short decode equal to a full-length decode of that sequence.
A graph that takes any length (`fit`, the onnxruntime CPU backend's ONNX) gets
windows cut to the sequence instead: never padded, never clamped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, repeat
from typing import NamedTuple

import numpy as np

# GPT-SoVITS generator window and overlap in frames (docs/board.md, reference port
# graphs; vocoder windows); Piper voices use the same schedule.
WINDOW_FRAMES = 96
OVERLAP_FRAMES = 12


class Window(NamedTuple):
    """One decoder call: frames [start, stop) in, [keep_from, keep_to) of them kept.

    keep_from/keep_to are relative to `start`. `size` is the graph's window (the
    frames it computes); stop - start equals it except for a padded window.
    """

    start: int
    stop: int
    keep_from: int
    keep_to: int
    size: int


def windows(
    n_frames: int,
    window: int = WINDOW_FRAMES,
    overlap: int = OVERLAP_FRAMES,
    *,
    first: int | None = None,
    fit: bool = False,
    sizes: Sequence[int] = (),
) -> Iterator[Window]:
    """Yield the windows that cover `n_frames` frames, in order.

    `first` is the first window's size (default `window`); every later window
    is `window` frames, or with `sizes` (more compiled sizes; static graphs
    only) the size `plan` picks. `fit`: the graph takes any length (see module
    doc).
    """
    first = window if first is None else first
    for size in (first, window, *sizes):
        if size <= 0 or overlap < 0 or size - 2 * overlap <= 0:
            raise ValueError(
                f"window {size} with overlap {overlap} leaves no frames to keep"
            )
    if n_frames <= 0:
        raise ValueError(f"cannot window {n_frames} frames")
    if fit or not sizes:
        steps: Iterable[int] = chain([first], repeat(window))
    else:
        steps = plan(n_frames, (first, window, *sizes), overlap, first=first)
    pos = 0
    for size in steps:
        if pos >= n_frames:
            break
        start = max(pos - overlap, 0)
        stop = start + size
        if stop >= n_frames:
            stop, keep_to = n_frames, n_frames
            if not fit and n_frames >= size:
                start = n_frames - size  # clamped back: more context, no padding
        else:
            keep_to = stop - overlap
        computed = stop - start if fit else size
        yield Window(start, stop, pos - start, keep_to - start, computed)
        pos = keep_to


def plan(
    n_frames: int, sizes: Sequence[int], overlap: int, *, first: int
) -> tuple[int, ...]:
    """The static window sizes, in order, that cover `n_frames` computing the
    fewest frames in total (ties: fewer calls).

    The first window is `first` (where the first audio waits), unless a smaller
    size covers the whole sequence. Each later window starts `overlap` frames
    before the first frame it keeps and keeps all but its last `overlap`, except
    the one that reaches the end. Cached: a voice asks for the same few lengths.
    """
    return _plan(n_frames, tuple(sorted(set(sizes))), overlap, first)


@lru_cache(maxsize=1024)
def _plan(
    n_frames: int, sizes: tuple[int, ...], overlap: int, first: int
) -> tuple[int, ...]:
    covering = [s for s in sizes if s >= n_frames]
    if covering and covering[0] <= first:
        return (covering[0],)
    # best[pos] = (frames computed, calls, next size) to finish from kept frame pos;
    # every pos has a choice (the largest size covers or leaves a later pos).
    best: dict[int, tuple[int, int, int]] = {n_frames: (0, 0, 0)}
    for pos in range(n_frames - 1, first - overlap - 1, -1):
        choices = []
        for s in sizes:
            if pos - overlap + s >= n_frames:
                choices.append((s, 1, s))
            else:
                frames, calls, _ = best[pos + s - 2 * overlap]
                choices.append((s + frames, calls + 1, s))
        best[pos] = min(choices, key=lambda c: (c[0], c[1], -c[2]))
    out, pos = [first], first - overlap
    while pos < n_frames:
        s = best[pos][2]
        out.append(s)
        pos = n_frames if pos - overlap + s >= n_frames else pos + s - 2 * overlap
    return tuple(out)


def cost(wins: list[Window]) -> float:
    """Frames computed per frame kept (1.0 = no recompute, no padding)."""
    kept = sum(w.keep_to - w.keep_from for w in wins)
    return sum(w.size for w in wins) / kept


DecodeFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def decode_windowed(
    frames: np.ndarray,
    decode: DecodeFn,
    hop: int,
    window: int = WINDOW_FRAMES,
    overlap: int = OVERLAP_FRAMES,
    *,
    first: int | None = None,
    fit: bool = False,
    sizes: Sequence[int] = (),
) -> Iterator[np.ndarray]:
    """Run `decode` over overlapped windows of `frames` [channels, n] and yield audio.

    `decode(z, mask)` gets z [channels, size] float32 and mask [size] float32
    (size: the window's, so a caller with several graphs picks one by
    z.shape[1]) and returns size * hop samples. Chunks are yielded as soon as
    each window is done (streaming); their concatenation has n * hop samples.
    """
    if frames.ndim != 2:
        raise ValueError(f"frames must be [channels, n], got shape {frames.shape}")
    channels, n_frames = frames.shape
    # One buffer pair per size, reused: the static graphs bind them.
    bufs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for win in windows(n_frames, window, overlap, first=first, fit=fit, sizes=sizes):
        if win.size not in bufs:
            bufs[win.size] = (
                np.zeros((channels, win.size), dtype=np.float32),
                np.zeros(win.size, dtype=np.float32),
            )
        buf, mask = bufs[win.size]
        length = win.stop - win.start
        buf[:, :length] = frames[:, win.start : win.stop]
        buf[:, length:] = 0.0
        mask[:length] = 1.0
        mask[length:] = 0.0
        audio = np.asarray(decode(buf, mask)).reshape(-1)
        if audio.size != win.size * hop:
            raise ValueError(
                f"decoder returned {audio.size} samples for a {win.size}-frame "
                f"window, expected {win.size * hop}"
            )
        yield audio[win.keep_from * hop : win.keep_to * hop]
