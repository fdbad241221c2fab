"""A tiny real ASR engine for the session tests: an energy voice-activity detector.

Its "transcripts" are the stretches of speech it hears, ``"speech 0.50-1.20"``
(seconds from the start of the stream); a partial says only where the open
stretch began, ``"speech 0.50"``, so a final extends its partials' text.  The
PCM fed is cut into frames of ``FRAME_S`` counted from the start of the stream
(so chunking does not change the result); a frame is voiced when its RMS level
reaches ``SPEECH_DBFS``.  A stretch of speech starts at a voiced frame and ends
once ``HANGOVER_S`` of unvoiced frames follow; it is reported from its first to
its last voiced frame.  Stretches shorter than ``MIN_SPEECH_S`` are clicks, not
speech, and are dropped.  While a stretch is open, each ``feed`` that moved its
end returns it as a partial; the stretch is final once it ended (or at
``finish``).  ``feed`` and ``finish`` are generators (each transcript is yielded
as its frame is analysed), and ``[n, channels]`` input is downmixed to the
channels' mean first.

Every ``GRAPH_FRAMES`` frames the session also runs the bundle's ``mm`` graph
(y = tanh(x @ W)) on the block's frame levels: the stand-in for an acoustic
model's encoder call, so a session makes graph calls that the host can count
and cancel between.  Its output does not change the segments, which come from
the energies alone.  The server never imports this module: the tests register
it under ``hexvoice.engines`` (tests/engine_site.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final

import numpy as np

from daemon.sdk.asr import (
    SessionFinished,
    Transcript,
    TranscriptionOptions,
    channels_of,
    downmix,
)
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities, VoiceInfo
from daemon.sdk.graphs import Runner
from tests.daemon.mm_engine import MmEngine

ENGINE_ID: Final = "test-vad"
#: Analysis frame (WebRTC's VAD takes 10, 20 or 30 ms frames).
FRAME_S: Final = 0.02
#: RMS level (dB re full scale) from which a frame counts as voiced: well above
#: a quiet room's noise floor (about -60 dBFS), well below speech (-30 to -10).
SPEECH_DBFS: Final = -40.0
#: Unvoiced time that ends a stretch of speech (shorter pauses stay inside it).
HANGOVER_S: Final = 0.2
#: Voiced stretches shorter than this are dropped (clicks, door knocks).
MIN_SPEECH_S: Final = 0.06
#: Frames per ``mm`` graph call; the graph takes 64 values (its x is [1, 64]).
GRAPH_FRAMES: Final = 25
GRAPH_WIDTH: Final = 64
#: Longest stream a session takes (s): this engine's declared ``max_input``.
#: Chosen for the tests (a VAD itself has no limit); the service refuses more.
MAX_AUDIO_S: Final = 300.0
#: Warm-up input: silence, a burst, silence (s, amplitude), at WARMUP_RATE.
WARMUP_RATE: Final = 16000
WARMUP_PARTS: Final = ((0.1, 0.0), (0.3, 0.3), (0.3, 0.0))
#: Level of an all-zero frame (log of 0 is -inf).
_SILENT_DB: Final = -200.0


def level_db(frame: np.ndarray) -> float:
    """RMS level of ``frame`` in dB re full scale."""
    rms = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64))))
    return 20.0 * np.log10(rms) if rms > 0 else _SILENT_DB


def burst_signal(
    parts: tuple[tuple[float, float], ...], rate: int, hz: float = 440.0
) -> np.ndarray:
    """Concatenated (seconds, amplitude) sine stretches: a tone-burst test signal."""
    pieces = []
    for seconds, amplitude in parts:
        t = np.arange(round(seconds * rate)) / rate
        pieces.append(amplitude * np.sin(2 * np.pi * hz * t))
    return np.concatenate(pieces).astype(np.float32)


class VadSession:
    """One stream: frames in, stretches of speech out (see the module doc)."""

    def __init__(
        self,
        mm: Runner,
        language: str | None,
        cancel: CancelToken | None,
        note: Callable[[str], None],
    ) -> None:
        self._mm, self._language, self._cancel = mm, language, cancel
        self._note = note  # the engine's call log
        self._rate = self._channels = 0
        self._frame = 0  # samples per frame, once the rate is known
        self._rest = np.zeros(0, np.float32)  # samples of an incomplete frame
        self._index = 0  # frames analysed so far
        self._levels: list[float] = []  # of the block not yet run by the graph
        self._open: tuple[int, int] | None = None  # (first, last) voiced frame
        self._shown = -1  # last frame of the open stretch last reported
        self._done = False
        #: graph calls made by this session
        self.graph_calls = 0

    def feed(self, pcm: np.ndarray, sample_rate: int) -> Iterator[Transcript]:
        self._note("feed")
        self._check_open()
        shape = (sample_rate, channels_of(pcm))
        if not self._rate:
            self._rate, self._channels = shape
            self._frame = round(FRAME_S * sample_rate)
        elif shape != (self._rate, self._channels):
            raise ValueError(
                f"{ENGINE_ID}: audio changed from {self._rate} Hz x "
                f"{self._channels} to {sample_rate} Hz x {shape[1]} within one session"
            )
        samples = np.concatenate([self._rest, downmix(pcm)])
        whole = len(samples) // self._frame * self._frame
        self._rest = samples[whole:]
        yield from self._frames(samples[:whole].reshape(-1, self._frame))
        partial = self._partial()
        if partial is not None:
            yield partial

    def finish(self) -> Iterator[Transcript]:
        self._note("finish")
        self._check_open()
        self._done = True
        if len(self._rest):
            yield from self._frames(self._rest[None, :])
        self._rest = self._rest[:0]
        self._run_graph()  # the last, partial block
        if self._open is not None:
            final = self._transcript(*self._open, final=True)
            self._open = None
            if final is not None:
                yield final

    def close(self) -> None:
        self._done = True
        self._levels.clear()

    def _check_open(self) -> None:
        if self._done:
            raise SessionFinished(f"{ENGINE_ID}: the session is finished")
        if self._cancel is not None:
            self._cancel.check()

    def _frames(self, frames: np.ndarray) -> Iterator[Transcript]:
        hang = round(HANGOVER_S / FRAME_S)
        for frame in frames:
            k, db = self._index, level_db(frame)
            self._index += 1
            self._levels.append(db)
            if len(self._levels) == GRAPH_FRAMES:
                self._run_graph()
            if db >= SPEECH_DBFS:
                first = k if self._open is None else self._open[0]
                self._open = (first, k)
            elif self._open is not None and k - self._open[1] >= hang:
                final = self._transcript(*self._open, final=True)
                self._open = None
                if final is not None:
                    yield final

    def _partial(self) -> Transcript | None:
        if self._open is None or self._open[1] == self._shown:
            return None
        partial = self._transcript(*self._open, final=False)
        if partial is not None:
            self._shown = self._open[1]
        return partial

    def _transcript(self, first: int, last: int, final: bool) -> Transcript | None:
        start, end = first * FRAME_S, (last + 1) * FRAME_S
        if end - start < MIN_SPEECH_S - 1e-9:
            return None
        text = f"speech {start:.2f}-{end:.2f}" if final else f"speech {start:.2f}"
        return Transcript(text, final, round(start, 6), round(end, 6), self._language)

    def _run_graph(self) -> None:
        if not self._levels:
            return
        if self._cancel is not None:
            self._cancel.check()
        x = np.zeros((1, GRAPH_WIDTH), np.float32)
        x[0, : len(self._levels)] = np.asarray(self._levels) / -_SILENT_DB
        self._mm.run({"x": x})
        self.graph_calls += 1
        self._levels.clear()


class VadEngine(MmEngine):
    """The ``test-vad`` engine: one voice (the bundle's name), any input rate."""

    engine_id = ENGINE_ID
    task = "asr"

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        self._note("load")
        self._mm = graphs["mm"]
        self._voice = VoiceInfo(bundle.name, tuple(bundle.languages), "energy VAD")

    def voices(self) -> list[VoiceInfo]:
        assert self._voice is not None, "load() first"
        return [self._voice]

    def capabilities(self) -> Capabilities:
        assert self._voice is not None, "load() first"
        return Capabilities(
            task="asr",
            languages=self._voice.languages,
            speed_range=None,
            streaming=True,
            max_input=MAX_AUDIO_S,
        )

    def open(
        self, options: TranscriptionOptions, cancel: CancelToken | None = None
    ) -> VadSession:
        assert self._mm is not None, "load() first"
        self._note("open")
        return VadSession(self._mm, options.language, cancel, self._note)

    def warmup(self) -> None:
        self._note("warmup")
        session = self.open(TranscriptionOptions())
        list(session.feed(burst_signal(WARMUP_PARTS, WARMUP_RATE), WARMUP_RATE))
        list(session.finish())
        session.close()

    def close(self) -> None:
        self._note("close")
        self._mm = None


def write_bundle(root: Path, mm_bin: Path, mm_onnx: Path, name: str = "vad") -> Path:
    """A ``test-vad`` bundle in ``root`` around the compiled ``matmul_tanh`` graph."""
    from scripts.common import bundling

    graphs = {"mm": bundling.add_graph(root, "mm", mm_bin, mm_onnx)}
    bundling.finish(
        root,
        engine=ENGINE_ID,
        name=name,
        sample_rate=WARMUP_RATE,
        languages=("en_US",),
        graphs=graphs,
        task="asr",
    )
    return root
