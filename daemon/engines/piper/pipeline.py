"""One piece of phoneme ids -> audio, over a piper-vits bundle's static graphs.

    ids -> enc_P{bucket} (NPU) -> SDP flows (numpy) -> ceil durations, prior
        -> flow_F{bucket} (NPU, overlapped windows, run as the decoder needs them)
        -> dec_W{window} (NPU, overlapped windows, each yielded when done: a small
        first window, then the build's sizes as windows.py `plan` picks them)

Graphs are `daemon.sdk.graphs.Runner`s, so the same code runs on the QNN HTP and
on onnxruntime's CPU provider. The NPU graphs are static (buckets, padding and
masks); the CPU backend's ONNX take any length (the converter writes them so),
so there every graph runs the real length: no padding, the flow in one call and
the decoder in a first window of `CPU_FIRST_WINDOW` frames, then one window for
the rest. `cancel.check()` runs before every graph call, so a cancelled request
stops within the graph call in flight.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from daemon.engines.piper.cpu import (
    DurationPredictor,
    durations,
    expand_prior,
    frame_count,
)
from daemon.engines.piper.params import (
    ENC_OUTPUTS,
    PiperParams,
    Scales,
    dec_key,
    enc_key,
    flow_key,
)
from daemon.engines.piper.schema import BOS
from daemon.sdk.audio.windows import decode_windowed, windows
from daemon.sdk.bundles.needs import require
from daemon.sdk.cancel import CancelToken

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

# CPU backend (graphs of any length) decoder schedule. The first window is where
# streaming shows: 128 frames = 1.5 s of audio at 22.05 kHz / 256, so a short
# sentence is one exact decode and a long one starts after ~1/4 of piper-tts's
# whole-sentence time (scripts/bench/piper/engine.py); the rest is one window, so the
# recompute is 2 x overlap frames per sentence.
CPU_FIRST_WINDOW = 128
CPU_WINDOW = 4096


class PiperGraphs:
    """Runs the graph chain for one piece; owns no model state besides refs."""

    def __init__(
        self,
        params: PiperParams,
        graphs: Mapping[str, Runner],
        sdp: DurationPredictor,
    ) -> None:
        # Fail at load, naming graph and tensor, if a graph is not what we feed:
        # the same declaration `hexvoice bundle verify` checks.
        require(params.graph_needs(), graphs)
        self.params, self.graphs, self.sdp = params, graphs, sdp
        #: the graphs take any length (the CPU backend's ONNX; -1 dims)
        self.fit = any(-1 in t.shape for t in graphs[dec_key(params.window)].inputs)

    @property
    def max_ids(self) -> int | None:
        """Most ids one encoder call takes: the largest bucket on static graphs,
        None (any number) on graphs of any length."""
        return None if self.fit else self.params.phoneme_buckets[-1]

    def _run(
        self, key: str, feeds: Mapping[str, np.ndarray], cancel: CancelToken | None
    ) -> dict[str, np.ndarray]:
        if cancel is not None:
            cancel.check()
        graph = self.graphs[key]
        outs = graph.run(feeds)
        return {
            name: np.asarray(outs[i], np.float32)
            for name, i in graph.output_index.items()
        }

    def encode(
        self, ids: Sequence[int], cancel: CancelToken | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """m_p, logs_p [C, t] and the SDP conditioning [H, t] for t ids."""
        t = len(ids)
        buckets = self.params.phoneme_buckets
        # (any-length graphs are all the same: past the buckets, the largest key)
        fitting = [p for p in buckets if p >= t] or ([buckets[-1]] if self.fit else [])
        if t == 0 or not fitting:
            takes = "at least 1" if self.max_ids is None else f"1..{self.max_ids}"
            raise ValueError(f"{t} phoneme ids; this voice takes {takes}")
        key = enc_key(fitting[0])
        p = t if self.fit else fitting[0]
        padded = np.zeros((1, p), np.int32)
        padded[0, :t] = ids
        mask = np.zeros((1, 1, p), np.float32)
        mask[..., :t] = 1.0
        out = self._run(key, {"ids": padded, "x_mask": mask}, cancel)
        m_p, logs_p, cond = (out[name][0, :, :t] for name in ENC_OUTPUTS)
        return m_p, logs_p, cond

    def flow_bucket(self, n: int) -> int:
        """The bucket that runs the fewest frames in total for n frames.

        Past a bucket, windows overlap by the flow's receptive field (which
        makes them exact), so smaller buckets cost overlap but stream sooner:
        ties go to the smaller bucket, whose first window is ready first.
        """
        ctx = self.params.flow_context
        costs = []
        for b in self.params.frame_buckets:
            if n <= b:
                costs.append((b, b))
            elif b > 2 * ctx:
                costs.append((-(-n // (b - 2 * ctx)) * b, b))
        return min(costs)[1]

    def flow_windows(
        self, z_p: np.ndarray, cancel: CancelToken | None = None
    ) -> Iterator[tuple[slice, np.ndarray]]:
        """(frames, z [C, len]) of z_p [C, n], in order, as each flow call ends."""
        channels, n = z_p.shape
        buckets = self.params.frame_buckets
        if self.fit:  # one exact call: no window, no padding
            # (the bucket's key, as encode: any-length graphs are all the same)
            key = flow_key(next((b for b in buckets if b >= n), buckets[-1]))
            feeds = {"z_p": z_p[None], "y_mask": np.ones((1, 1, n), np.float32)}
            yield slice(0, n), self._run(key, feeds, cancel)["z"][0]
            return
        size = self.flow_bucket(n)
        buf = np.zeros((1, channels, size), np.float32)
        mask = np.zeros((1, 1, size), np.float32)
        for win in windows(n, size, self.params.flow_context):
            length = win.stop - win.start
            buf[0, :, :length] = z_p[:, win.start : win.stop]
            buf[0, :, length:] = 0.0
            mask[..., :length] = 1.0
            mask[..., length:] = 0.0
            z = self._run(flow_key(size), {"z_p": buf, "y_mask": mask}, cancel)["z"]
            keep = slice(win.start + win.keep_from, win.start + win.keep_to)
            yield keep, z[0, :, win.keep_from : win.keep_to]

    def flow(self, z_p: np.ndarray, cancel: CancelToken | None = None) -> np.ndarray:
        """z [C, n] from the prior sample z_p [C, n], exact for any n >= 1."""
        out = np.empty_like(z_p)
        for keep, z in self.flow_windows(z_p, cancel):
            out[:, keep] = z
        return out

    def decode(
        self, z: np.ndarray | _LazyFrames, cancel: CancelToken | None = None
    ) -> Iterator[np.ndarray]:
        """Audio of z [C, n], one chunk per decoder window as it finishes."""
        p = self.params
        fixed = dec_key(p.window)  # any-length graphs: one serves every size

        def window(frames: np.ndarray, mask: np.ndarray) -> np.ndarray:
            feeds = {"z": frames[None], "frame_mask": mask[None, None]}
            key = fixed if self.fit else dec_key(frames.shape[1])
            return self._run(key, feeds, cancel)["audio"]

        frames: Any = z  # decode_windowed only slices [:, a:b]: lazy frames do
        if self.fit:
            first, size, sizes = CPU_FIRST_WINDOW, CPU_WINDOW, ()
        else:  # the build's sizes: a small first window, then plan()'s picks
            first, size = p.first_window or p.window, p.window
            sizes = p.decoder_sizes if len(p.decoder_sizes) > 1 else ()
        yield from decode_windowed(
            frames, window, p.hop, size, p.overlap, first=first, fit=self.fit,
            sizes=sizes,
        )  # fmt: skip

    def stream(
        self,
        ids: Sequence[int],
        scales: Scales,
        rng: np.random.Generator,
        cancel: CancelToken | None = None,
    ) -> Iterator[np.ndarray]:
        """Raw audio (float32, no fades) of one piece, window by window.

        The flow runs window by window as the decoder reaches its frames, so the
        first audio waits for one flow window, not for the whole sentence.
        Noise is drawn from `rng` in a fixed order (SDP noise, then the prior's),
        so a seeded generator reproduces a request exactly.
        """
        m_p, logs_p, cond = self.encode(ids, cancel)
        t = m_p.shape[1]
        mask = np.ones(t, np.float32)
        noise = (rng.standard_normal((2, t)) * scales.noise_w).astype(np.float32)
        logw = self.sdp.logw(cond, mask, noise)
        per_phoneme = durations(logw, mask, scales.length_scale)
        n = frame_count(per_phoneme)
        prior = rng.standard_normal((m_p.shape[0], n)).astype(np.float32)
        z_p = expand_prior(m_p, logs_p, per_phoneme, prior, scales.noise_scale)
        z = _LazyFrames(z_p.shape, self.flow_windows(z_p, cancel))
        yield from self.decode(z, cancel)

    def warmup(self) -> None:
        """One call of every graph (and of the SDP, which compiles numba's GELU)."""
        bos = self.params.phoneme_id_map[BOS][0]
        smallest = self.params.phoneme_buckets[0]
        for p in self.params.phoneme_buckets:
            # encode() picks the smallest bucket that fits: p ids run bucket p.
            _, _, cond = self.encode([bos] * (1 if p == smallest else p))
        self.sdp.logw(cond[:, :1], np.ones(1, np.float32), np.zeros((2, 1), np.float32))
        c = self.params.channels
        for i, f in enumerate(self.params.frame_buckets):
            self.flow(np.zeros((c, 1 if i == 0 else f), np.float32))
        for w in self.params.decoder_sizes:  # each size's graph, once
            feeds = {"z": np.zeros((1, c, w), np.float32)}
            self._run(
                dec_key(w), feeds | {"frame_mask": np.ones((1, 1, w), np.float32)}, None
            )


class _LazyFrames:
    """z [C, n] filled by flow windows only when a slice up to a frame is read."""

    ndim = 2

    def __init__(
        self, shape: tuple[int, int], chunks: Iterator[tuple[slice, np.ndarray]]
    ) -> None:
        self.shape = shape
        self._z = np.empty(shape, np.float32)
        self._ready = 0
        self._chunks = chunks

    def __getitem__(self, key: tuple[slice, slice]) -> np.ndarray:
        stop = key[1].stop
        while self._ready < stop:
            keep, z = next(self._chunks)
            self._z[:, keep] = z
            self._ready = keep.stop
        return self._z[key]
