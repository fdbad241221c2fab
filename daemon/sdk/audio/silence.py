"""Where to cut long speech: an energy voice-activity detector in numpy.

Speech engines with static graphs hold a bounded utterance (Qwen3-ASR: what its
largest prompt bucket holds).  :func:`choose_cut` picks the sample at which to
end a segment that would outgrow ``max_len``: inside a pause between words, so
no word is ever split while a pause exists in the search span (the later half
of the segment).  Levels are 20 ms RMS frames in dB relative to full scale; a
frame is silent when it lies ``RELATIVE_DB`` below the loudest frame of the
segment (and always below ``SILENT_DBFS``).  Upstream qwen-asr has no such cut
(it splits at the quietest 100 ms only past 20 minutes); this one prefers the
latest real pause, else the quietest stretch of a pause's length.
"""

from __future__ import annotations

from typing import Final

import numpy as np

#: analysis frame (WebRTC's VAD takes 10, 20 or 30 ms frames)
FRAME_S: Final = 0.02
#: a frame this far below the segment's loudest frame is a pause: speech's
#: dynamic range within an utterance is about 30-40 dB, room noise sits lower
RELATIVE_DB: Final = 35.0
#: frames below this level are silent whatever the loudest is (digital silence,
#: a quiet room: about -60 dBFS)
SILENT_DBFS: Final = -60.0
#: the shortest pause between words: stop closures inside words last 50-100 ms
MIN_PAUSE_S: Final = 0.15
#: the cut is searched in the last (1 - SEARCH_FROM) of the segment, so no
#: segment is shorter than this fraction of the maximum unless the audio ends
SEARCH_FROM: Final = 0.5
#: level of an all-zero frame (log of 0 is -inf)
_ZERO_DB: Final = -200.0


def levels_db(x: np.ndarray, frame: int) -> np.ndarray:
    """RMS level (dBFS) of each whole ``frame``-sample frame of ``x``."""
    n = len(x) // frame
    blocks = np.asarray(x[: n * frame], np.float64).reshape(n, frame)
    power = np.mean(blocks * blocks, axis=1)
    with np.errstate(divide="ignore"):
        db = 10.0 * np.log10(power)
    return np.where(power > 0, db, _ZERO_DB)


def silent_runs(silent: np.ndarray) -> list[tuple[int, int]]:
    """(first, stop) frame ranges where ``silent`` holds."""
    edges = np.diff(np.concatenate([[0], silent.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def choose_cut(x: np.ndarray, rate: int, max_len: int) -> int:
    """The sample in ``(max_len * SEARCH_FROM, max_len]`` at which to end the
    segment ``x`` (longer than ``max_len``): the middle of the latest pause of
    at least ``MIN_PAUSE_S``; without one, of the quietest ``MIN_PAUSE_S``
    stretch (as upstream picks the quietest 100 ms, a stretch rather than one
    frame, which could be a stop closure inside a word)."""
    if len(x) <= max_len:
        raise ValueError(f"a {len(x)}-sample segment fits {max_len}: no cut needed")
    frame = max(1, round(FRAME_S * rate))
    lo = int(max_len * SEARCH_FROM)
    levels = levels_db(x[lo:max_len], frame)
    if not len(levels):
        return max_len
    loudest = float(levels_db(x[:max_len], frame).max())
    silent = (levels < loudest - RELATIVE_DB) | (levels < SILENT_DBFS)
    pause = round(MIN_PAUSE_S / FRAME_S)
    pauses = [r for r in silent_runs(silent) if r[1] - r[0] >= pause]
    if pauses:
        first, stop = pauses[-1]
    else:
        width = min(pause, len(levels))
        energy = np.convolve(10.0 ** (levels / 10.0), np.ones(width), mode="valid")
        first = int(np.argmin(energy))
        stop = first + width
    return lo + (first + stop) * frame // 2
