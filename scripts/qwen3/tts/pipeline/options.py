"""The options of a Qwen3-TTS build (scripts/build-qwen3-tts) and their defaults.

Their own module, so the step graph (pipeline/graph.py) and the command line
(build.py) both read them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from scripts.qwen3.common import cli
from scripts.qwen3.tts.windows import UPSTREAM_CHUNK, UPSTREAM_CONTEXT, Window

#: docs/qwen3.md, graph set: one bucket per role until weight sharing lands (each copies
#: the talker's 0.88 GB): 64 rows hold a sentence's non-streaming prompt, 256 a
#: paragraph's; 1024 KV rows are ~80 s of audio at 12.5 frames/s
PREFILL_BUCKETS: Final = (64, 256)
KV_BUCKETS: Final = (1024,)
#: codec graphs (frames per call, contexts from the receptive field): 40 and
#: 100 frames for the first audio and the ramp, then upstream's own 325-frame
#: call, which holds any chunk's whole left context, so streamed audio is
#: upstream's decode (measured, codec_plan.py: exact, 2.1 frames computed per
#: frame kept over 400 frames, 1.1 steady; the old 40:12, 100:8 ramp cost 1.1
#: and was 21 dB from upstream's decode on the tiny codec)
CODEC_WINDOWS: Final = (Window(40), Window(100), Window(325))
#: frames before the first audio leaves: 0.64 s of speech, decoded with no
#: context (nothing precedes it) in the smallest codec graph that holds it
FIRST_FRAMES: Final = 8
#: Base: reference clip buckets in seconds (speaker_<F> graphs); a clip runs
#: padded in the smallest bucket holding it, one over 10 s is cut to 10 s
XVECTOR_SECONDS: Final = (3.0, 5.0, 8.0, 10.0)
CP_WEIGHTS: Final = ("fp16", "w8a16")


@dataclass(frozen=True)
class BuildOptions:
    model: Path
    target: str
    out: Path
    codec: Path | None = None
    prefill_buckets: tuple[int, ...] = PREFILL_BUCKETS
    kv_buckets: tuple[int, ...] = KV_BUCKETS
    codec_windows: tuple[Window, ...] = CODEC_WINDOWS
    first_frames: int = FIRST_FRAMES
    xvector_seconds: tuple[float, ...] = XVECTOR_SECONDS
    name: str | None = None
    work: Path | None = None
    qnn_cache: Path | None = None
    #: None: on for --target simulator, off for a board target
    sim_gates: bool | None = None
    #: the simulator gate of the codec windows (a bundle sharing another's
    #: codec skips it)
    sim_codec: bool = True
    #: the codec windows (frames) that gate runs, each whole; None: every one.
    #: The simulator takes ~4 s per frame of the tiny codec (measured: codec_4
    #: 18 s, codec_8 33 s, codec_16 53 s), so a test bundle lists its smallest
    sim_codec_windows: tuple[int, ...] | None = None
    #: the fp32 graphs in onnx/ for the CPU backend (a board bundle can leave
    #: them out: at full size the talker graphs are ~3.5 GB each)
    onnx: bool = True
    #: the code predictor's weights on the NPU: fp16, or w8a16 (opt-in)
    cp_weights: str = "fp16"
    #: also bundle codec_325 (upstream's 300 + 25 chunking: the engine's
    #: "upstream" schedule, equal to upstream's decode); gated on the CPU always
    upstream_codec: bool = False

    def validate(self) -> None:
        cli.check_target_and_buckets(
            self.target, self.prefill_buckets, self.kv_buckets
        )
        if not self.codec_windows:
            raise ValueError("--codec-windows: expected at least one window")
        largest = max(w.frames for w in self.codec_windows)
        if not 1 <= self.first_frames <= largest:
            raise ValueError(f"--first-frames: expected 1..{largest} (the largest "
                             f"codec window), found {self.first_frames}")  # fmt: skip
        if not self.xvector_seconds or min(self.xvector_seconds) <= 0:
            raise ValueError("--xvector-seconds: expected positive seconds, found "
                             f"{self.xvector_seconds}")  # fmt: skip
        if self.cp_weights not in CP_WEIGHTS:
            raise ValueError(f"--cp-weights must be one of {CP_WEIGHTS}")
        unknown = set(self.sim_codec_windows or ()) - set(self.codec_frames)
        if unknown or self.sim_codec_windows == ():
            raise ValueError(
                "--sim-codec-windows: expected frames of the codec graphs "
                f"{list(self.codec_frames)}, found {list(self.sim_codec_windows or ())}"
            )

    @property
    def codec_frames(self) -> tuple[int, ...]:
        """Every codec graph's frames: the windows, and codec_325 if asked."""
        frames = {w.frames for w in self.codec_windows}
        if self.upstream_codec:
            frames.add(UPSTREAM_CHUNK + UPSTREAM_CONTEXT)
        return tuple(sorted(frames))

    @property
    def sim_codec_frames(self) -> tuple[int, ...]:
        """The codec graphs the simulator gate runs."""
        if not self.sim_codec:
            return ()
        return tuple(sorted(set(self.sim_codec_windows or self.codec_frames)))

    @property
    def run_sim_gates(self) -> bool:
        return cli.sim_gates_on(self.target, self.sim_gates)
