"""The options of a Qwen3-TTS build (scripts/build-qwen3-tts) besides the
Qwen3 ones (scripts/qwen3/common/context.py), their defaults, the codec
window syntax and the windows as the windows stage chose them.  Their own
module, so the stages (through the context) and the declaration (build.py,
which adds the bucket defaults) both read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

from scripts.qwen3.common.context import Qwen3Options
from scripts.qwen3.tts.oracle_audio import CHUNK_FRAMES, LEFT_CONTEXT

#: upstream's own codec call: a 300-frame chunk after 25 frames of context
#: (chunked_decode's defaults), the codec_325 graph
UPSTREAM_FRAMES: Final = CHUNK_FRAMES + LEFT_CONTEXT


class Window(NamedTuple):
    """A codec graph of ``frames`` codes per call; ``context`` None: measured
    (codec_plan.py)."""

    frames: int
    context: int | None = None


def parse_windows(text: str) -> tuple[Window, ...]:
    """``"16,80"`` or ``"16:8,80:24"`` (FRAMES[:CONTEXT], comma-separated)."""
    out = []
    for part in text.split(","):
        frames, _, context = part.strip().partition(":")
        try:
            w = Window(int(frames), int(context) if context else None)
        except ValueError:
            raise ValueError(
                "expected FRAMES[:CONTEXT],..., e.g. 16,80 or 16:8,80:24; "
                f"found {text!r}"
            ) from None
        if w.frames < 1 or (w.context is not None and not 0 <= w.context < w.frames):
            raise ValueError(
                f"window {part!r}: expected frames >= 1 and 0 <= context < frames"
            )
        out.append(w)
    return tuple(out)


@dataclass(frozen=True)
class CodecWindow:
    """A codec window as chosen (the windows stage): its context found."""

    frames: int
    context: int


@dataclass(frozen=True)
class CodecPlan:
    """The chosen windows, as the params' ``codec`` says them (with the SNR
    the windows stage measured against upstream's decode)."""

    windows: list[CodecWindow]
    first_frames: int
    stream_snr_db: float

    def params(self) -> dict[str, Any]:
        return asdict(self)


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
class TtsOptions(Qwen3Options):
    """The Qwen3 options and the TTS build's own (scripts/build-qwen3-tts)."""

    codec: Path | None = None
    codec_windows: tuple[Window, ...] = CODEC_WINDOWS
    first_frames: int = FIRST_FRAMES
    xvector_seconds: tuple[float, ...] = XVECTOR_SECONDS
    #: the simulator gate of the codec windows (a bundle sharing another's
    #: codec skips it)
    sim_codec: bool = True
    #: the codec windows (frames) that gate runs, each whole; None: every one.
    #: The simulator takes ~4 s per frame of the tiny codec (measured: codec_4
    #: 18 s, codec_8 33 s, codec_16 53 s), so a test bundle lists its smallest
    sim_codec_windows: tuple[int, ...] | None = None
    #: the code predictor's weights on the NPU: fp16, or w8a16 (opt-in)
    cp_weights: str = "fp16"
    #: also bundle codec_325 (upstream's 300 + 25 chunking: the engine's
    #: "upstream" schedule, equal to upstream's decode); gated on the CPU always
    upstream_codec: bool = False

    @property
    def codec_frames(self) -> tuple[int, ...]:
        """Every codec graph's frames: the windows, and codec_325 if asked."""
        frames = {w.frames for w in self.codec_windows}
        if self.upstream_codec:
            frames.add(UPSTREAM_FRAMES)
        return tuple(sorted(frames))

    @property
    def sim_codec_frames(self) -> tuple[int, ...]:
        """The codec graphs the simulator gate runs."""
        if not self.sim_codec:
            return ()
        return tuple(sorted(set(self.sim_codec_windows or self.codec_frames)))

    @property
    def quantized(self) -> bool:
        return self.cp_weights == "w8a16"
