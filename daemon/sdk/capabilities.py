"""What an engine declares it can do: the one table requests are checked against.

Each loaded engine answers ``capabilities()`` once its bundle is loaded. The
service checks every request against it at the edge, before queueing; nothing
downstream checks the same fields again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from daemon.sdk.cloning import Cloning

Task = Literal["tts", "asr"]
TASKS: Final[tuple[Task, ...]] = ("tts", "asr")

#: The speed range every TTS engine accepts today (OpenAI's own range is wider,
#: 0.25-4.0, and so is ours: duration scaling is exact at any factor).
MIN_SPEED: Final = 0.25
MAX_SPEED: Final = 4.0
#: Silence between two sentences unless the engine says otherwise: hexvoice's
#: own rhythm (daemon/sdk/audio/shaping.py SENTENCE_PAUSE_S, which equals it).
DEFAULT_SENTENCE_PAUSE_S: Final = 0.3


@dataclass(frozen=True)
class VoiceInfo:
    """One voice (TTS) or model (ASR) a loaded bundle offers, as clients see it."""

    name: str
    languages: tuple[str, ...]
    description: str = ""
    speakers: tuple[str, ...] = ()
    #: (name, url) of whoever made the voice, shown to Wyoming clients
    attribution: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class Capabilities:
    """One engine's declared abilities (per loaded bundle)."""

    task: Task
    #: language tags it speaks or understands, e.g. ("en_US",) or ("zh", "en")
    languages: tuple[str, ...]
    #: TTS: the rate of the audio it yields; ASR: None (it takes any rate in)
    sample_rate_out: int | None = None
    #: ASR: the rates ``feed`` accepts without resampling; () means any rate
    sample_rates_in: tuple[int, ...] = ()
    #: named speakers of a multi-speaker voice; () for a single speaker
    speakers: tuple[str, ...] = ()
    #: TTS: the accepted speed factors, inclusive; None if speed is not adjustable
    #: (then only the normal speed, 1.0, is accepted)
    speed_range: tuple[float, float] | None = (MIN_SPEED, MAX_SPEED)
    #: TTS: yields audio before the whole text is done; ASR: yields partials
    streaming: bool = True
    #: longest input: characters of text (TTS) or seconds of audio (ASR)
    max_input: float = 0.0
    #: TTS: makes voices from a clip (``CloningEngine.clone``); None: it does not
    cloning: Cloning | None = None
    #: TTS: the silence it puts between two sentences of one request, which a
    #: text stream (Wyoming synthesize-chunk) puts between its sentences' audio
    sentence_pause_s: float = DEFAULT_SENTENCE_PAUSE_S

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.task == "tts" and not self.sample_rate_out:
            raise ValueError("a TTS engine must declare sample_rate_out")
        if self.speed_range is not None:
            lo, hi = self.speed_range
            if not 0 < lo <= hi:
                raise ValueError(f"speed_range must be 0 < low <= high, got {lo, hi}")
        if self.max_input <= 0:
            raise ValueError(f"max_input must be > 0, got {self.max_input!r}")
        if not self.sentence_pause_s >= 0:
            raise ValueError(
                f"sentence_pause_s must be >= 0, got {self.sentence_pause_s!r}"
            )
