"""The audio encoder, window by window, while an utterance streams in.

Upstream (modeling_qwen3_asr.py ``Qwen3ASRAudioEncoder.forward``, docs/qwen3.md, ASR
encoder windows) cuts the mel into 100-frame chunks (the tail chunk zero-padded to the
longest, i.e. 100 frames, unless the utterance is shorter than one chunk), runs the conv
stem per chunk and attends within windows of C chunks (FA2/vLLM semantics).  Only the
last chunk of an utterance is partial, so every window but the last is C full chunks,
and a window's valid tokens come first: the ``encoder`` graph takes one window with a
key mask over its padding.

Why windows: upstream's vLLM backend and its transformers FA2 path attend
within n_window_infer frames (``cu_seqlens``: 800 frames = 8 s, 104 tokens,
in Qwen3-ASR-0.6B); its transformers SDPA/eager path passes the layers no
mask and attends over the whole utterance.  The two agree up to one window
and part beyond it.  The windows are what upstream serves with, and what lets
a window be encoded, final, while later audio still streams in.  Measured on
the tiny model (4 s windows), 4.5 s clip: SDPA vs windowed L2 rel 0.19, greedy
ids equal for 2 of 32 steps; this engine vs windowed 4e-7 (the test
``test_the_encoder_attends_within_windows_as_fa2_and_vllm_do`` pins both).

:class:`StreamingAudio` encodes each window as soon as its frames settle, with
the floor (max - 8) and peak scale the utterance has then; ``finish`` re-encodes
the windows whose floor or scale moved, so the result equals encoding the whole
utterance at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.asr.audio import peak_scale
from daemon.engines.qwen3.asr.mel import MelStream
from daemon.engines.qwen3.asr.params import AsrParams, MelParams, encoder_io
from daemon.sdk.ar.bound import BoundGraph
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner


def _conv_len(n: int) -> int:
    """Output length of one Conv2d(k3, s2, p1) over ``n`` frames."""
    return (n - 1) // 2 + 1 if n > 0 else 0


def stem_lengths(frames: int) -> tuple[int, int, int]:
    """Valid lengths after conv1, conv2, conv3 of a chunk of ``frames``."""
    a = _conv_len(frames)
    b = _conv_len(a)
    return a, b, _conv_len(b)


def audio_tokens(frames: int, m: MelParams) -> int:
    """Encoder tokens of an utterance of ``frames`` mel frames (upstream
    ``_get_feat_extract_output_lengths``, 100/13 there)."""
    full, rest = divmod(frames, m.chunk_frames)
    return full * m.chunk_tokens + stem_lengths(rest)[2]


def frames_for_tokens(tokens: int, m: MelParams) -> int:
    """The most mel frames whose encoding has at most ``tokens`` tokens."""
    full, rest = divmod(tokens, m.chunk_tokens)
    frames = full * m.chunk_frames
    extra = max((f for f in range(m.chunk_frames) if stem_lengths(f)[2] <= rest),
                default=0)  # fmt: skip
    return frames + extra


class WindowEncoder:
    """The ``encoder`` graph on one window of features (inputs bound once)."""

    def __init__(self, p: AsrParams, runner: Runner) -> None:
        self.m = p.mel
        self.mask_value = np.float32(p.mask_value)
        self.graph = BoundGraph(runner, encoder_io(p))

    def encode(self, feats: np.ndarray, utterance_frames: int) -> np.ndarray:
        """float32 [valid tokens, H] of a window's features [f, n_mels]
        (f <= C * chunk_frames) of an utterance of ``utterance_frames``."""
        m, b = self.m, self.graph.bind()
        c, f = m.window_chunks, m.chunk_frames
        n = len(feats)
        if not 0 < n <= c * f:
            raise ValueError(f"a window holds 1..{c * f} frames, got {n}")
        mel = b["mel"]
        mel[...] = 0.0
        padded = np.zeros((c * f, m.n_mels), np.float32)
        padded[:n] = feats
        mel[:, 0] = padded.reshape(c, f, m.n_mels).transpose(0, 2, 1)
        b["stem_mask1"][...] = 1.0
        b["stem_mask2"][...] = 1.0
        if utterance_frames < f:
            # upstream pads nothing then: conv padding must see zeros past the end
            one, two, _ = stem_lengths(utterance_frames)
            b["stem_mask1"][0, ..., one:] = 0.0
            b["stem_mask2"][0, ..., two:] = 0.0
        valid = audio_tokens(n, m)
        b["key_mask"][...] = self.mask_value
        b["key_mask"][..., :valid] = 0.0
        self.graph.execute()
        return np.array(b["audio"][:valid], np.float32)


@dataclass
class _Window:
    audio: np.ndarray
    scale: float
    log_max: float


class StreamingAudio:
    """One utterance: samples in, its encoder rows out (see the module doc)."""

    def __init__(self, p: AsrParams, encoder: WindowEncoder) -> None:
        self.m = p.mel
        self.mel = MelStream(p.mel)
        self.encoder = encoder
        self._windows: list[_Window] = []
        #: graph calls made for this utterance (re-encodes included)
        self.encoder_calls = 0

    @property
    def window_frames(self) -> int:
        return self.m.window_frames

    def push(self, x: np.ndarray) -> None:
        self.mel.push(x)

    def truncate(self, samples: int) -> None:
        """Cut the utterance at ``samples``; windows past the cut are dropped."""
        self.mel.truncate(samples)
        del self._windows[self.mel.frames // self.window_frames :]

    def _state(self) -> tuple[float, float]:
        scale = peak_scale(self.mel.peak)
        return scale, self.mel.log_max(scale)

    def _encode(self, j: int, stop: int, cancel: CancelToken | None) -> _Window:
        if cancel is not None:
            cancel.check()
        scale, log_max = self._state()
        start = j * self.window_frames
        feats = self.mel.features(start, stop, scale, log_max)
        self.encoder_calls += 1
        return _Window(self.encoder.encode(feats, self.mel.frames), scale, log_max)

    def encode_ready(self, cancel: CancelToken | None = None) -> Iterator[None]:
        """Encode every window whose frames all settled (yields after each)."""
        w = self.window_frames
        # a full window is >= 1 chunk, so it never needs the short-utterance
        # stem masks, whatever the utterance's final length
        while (len(self._windows) + 1) * w <= self.mel.frames:
            j = len(self._windows)
            self._windows.append(self._encode(j, (j + 1) * w, cancel))
            yield

    def finish(self, cancel: CancelToken | None = None) -> Iterator[None]:
        """Settle the last frames; re-encode stale windows, encode the rest
        (yields after each graph call); then :attr:`rows` is the result."""
        self.mel.finish()
        frames, w = self.mel.frames, self.window_frames
        total = -(-frames // w)
        del self._windows[total:]
        scale, log_max = self._state()
        for j in range(total):
            stop = min((j + 1) * w, frames)
            done = j < len(self._windows)
            if done and stop == (j + 1) * w:
                win = self._windows[j]
                if win.scale == scale and win.log_max == log_max:
                    continue
            window = self._encode(j, stop, cancel)
            if done:
                self._windows[j] = window
            else:
                self._windows.append(window)
            yield

    @property
    def frames(self) -> int:
        return self.mel.frames

    @property
    def rows(self) -> np.ndarray:
        """float32 [tokens, H] of the finished utterance."""
        if not self._windows:
            return np.zeros((0, 0), np.float32)
        return np.concatenate([w.audio for w in self._windows])
