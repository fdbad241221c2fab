"""Overlapped fixed-size windows for running a vocoder (or any conv stack) statically.

A static graph decodes `window` frames at a time. Output is produced in steps of
`window - 2 * overlap` frames; each step's window starts `overlap` frames early
and is clamped to the sequence, so edge windows stick to the sequence boundary
instead of reading zero padding (zero padding gave visible errors over the edge
frames, reference-ports.md §1.6). Only the central part of each window is kept,
with a hard cut: the kept frames saw at least `overlap` real frames of context on
every side that is not a sequence edge.

A sequence shorter than one window cannot be clamped; it gets one window padded
with zeros plus a frame mask (1 = real frame) that a decoder graph can use to
zero its padded positions after every conv, which makes the short decode equal
to a full-length decode of that sequence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

# GPT-SoVITS generator window and overlap in frames (reference-ports.md §1.3/§1.6);
# Piper voices use the same schedule.
WINDOW_FRAMES = 96
OVERLAP_FRAMES = 12


class Window(NamedTuple):
    """One decoder call: frames [start, stop) in, [keep_from, keep_to) of them kept.

    keep_from/keep_to are relative to `start`. stop - start equals the window size
    except for a sequence shorter than one window.
    """

    start: int
    stop: int
    keep_from: int
    keep_to: int


def windows(
    n_frames: int, window: int = WINDOW_FRAMES, overlap: int = OVERLAP_FRAMES
) -> Iterator[Window]:
    """Yield the windows that cover `n_frames` frames, in order."""
    if window <= 0 or overlap < 0 or window - 2 * overlap <= 0:
        raise ValueError(
            f"window {window} with overlap {overlap} leaves no frames to keep"
        )
    if n_frames <= 0:
        raise ValueError(f"cannot window {n_frames} frames")
    if n_frames <= window:
        yield Window(0, n_frames, 0, n_frames)
        return
    step = window - 2 * overlap
    for first in range(0, n_frames, step):
        last = min(first + step, n_frames)
        start = min(max(first - overlap, 0), n_frames - window)
        yield Window(start, start + window, first - start, last - start)


DecodeFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def decode_windowed(
    frames: np.ndarray,
    decode: DecodeFn,
    hop: int,
    window: int = WINDOW_FRAMES,
    overlap: int = OVERLAP_FRAMES,
) -> Iterator[np.ndarray]:
    """Run `decode` over overlapped windows of `frames` [channels, n] and yield audio.

    `decode(z, mask)` gets z [channels, window] float32 and mask [window] float32
    and returns window * hop samples. Chunks are yielded as soon as each window is
    done (streaming); their concatenation has n * hop samples.
    """
    if frames.ndim != 2:
        raise ValueError(f"frames must be [channels, n], got shape {frames.shape}")
    channels, n_frames = frames.shape
    buf = np.zeros((channels, window), dtype=np.float32)
    mask = np.zeros(window, dtype=np.float32)
    for win in windows(n_frames, window, overlap):
        length = win.stop - win.start
        buf[:, :length] = frames[:, win.start : win.stop]
        buf[:, length:] = 0.0
        mask[:length] = 1.0
        mask[length:] = 0.0
        audio = np.asarray(decode(buf, mask)).reshape(-1)
        if audio.size != window * hop:
            raise ValueError(
                f"decoder returned {audio.size} samples for a {window}-frame "
                f"window, expected {window * hop}"
            )
        yield audio[win.keep_from * hop : win.keep_to * hop]
