"""What a `piper-vits` bundle's voice.yaml `params` and a request's `extra` may
hold: the shapes the config reader checks (daemon/config/reader.py), before
params.py turns them into the engine's `PiperParams` and `Scales`."""

from __future__ import annotations

import math
from typing import Annotated, Final

import msgspec

from daemon.config.fields import Count, Index, Sizes, Text
from daemon.config.reader import invalid

# Piper's special symbols (piper/const.py): pad after every phoneme, BOS, EOS.
PAD: Final = "_"
BOS: Final = "^"
EOS: Final = "$"
# phoneme_type values of a Piper voice config this engine can phonemize:
# espeak-ng IPA, or raw codepoints (piper/config.py PhonemeType).
PHONEME_TYPES: Final = ("espeak", "text")
# Upper bounds for the noise scales a request may set: Piper voices ship
# 0.333-0.8; far above that the prior sample is noise, not speech.
MAX_NOISE: Final = 2.0
#: Silence after a sentence by default: none, as piper-tts (its CLI's
#: --sentence-silence defaults to 0.0) and wyoming-piper (no silence at all).
PIPER_SENTENCE_SILENCE_S: Final = 0.0
#: Longest sentence silence a voice may ask for: a pause, not a gap that looks
#: like the service stalled.
MAX_SENTENCE_SILENCE_S: Final = 10.0

#: The scales, the voice's own and a request's (every request uses them).
Noise = Annotated[float, msgspec.Meta(ge=0, le=MAX_NOISE)]
Length = Annotated[float, msgspec.Meta(gt=0)]  # and finite: _finite_length
Silence = Annotated[float, msgspec.Meta(ge=0, le=MAX_SENTENCE_SILENCE_S)]


class _Window(msgspec.Struct, frozen=True):
    frames: Count  # the steady window
    overlap: Index
    first: Count | None = None  # the first window (None: frames)
    sizes: tuple[Count, ...] = ()  # tail sizes (daemon/sdk/audio/windows.py)


class _Credit(msgspec.Struct, frozen=True):
    name: Text
    url: Text


class _Source(msgspec.Struct, frozen=True):
    file: Text
    sha256: Text


class ParamsFile(msgspec.Struct, frozen=True):
    """``params`` as ``PiperParams.to_dict`` writes them, with the converter's
    provenance (``scripts/piper/convert.py``: the source model and the numpy SDP
    port's error; recorded for people, unused by the engine)."""

    phoneme_type: Text
    espeak_voice: Text
    phoneme_id_map: dict[str, tuple[Index, ...]]
    noise_scale: Noise
    length_scale: Length
    noise_w: Noise
    hop: Count
    channels: Count
    phoneme_buckets: Sizes
    frame_buckets: Sizes
    flow_context: Index
    window: _Window
    sdp: Text
    vowel_clusters: tuple[tuple[str, ...], ...] = ()
    sentence_silence: Silence = PIPER_SENTENCE_SILENCE_S
    normalize_audio: bool = True
    attribution: _Credit | None = None
    source: _Source | None = None
    sdp_max_abs_err: float | None = None
    vocoder_radius_frames: float | None = None  # the overlap covers it

    def __post_init__(self) -> None:
        _finite_length(self.length_scale)
        if self.phoneme_type not in PHONEME_TYPES:
            raise invalid(
                "phoneme_type", f"one of {list(PHONEME_TYPES)}", self.phoneme_type
            )
        missing = [s for s in (PAD, BOS, EOS) if s not in self.phoneme_id_map]
        if missing:
            raise invalid(
                "phoneme_id_map",
                f"entries for {[PAD, BOS, EOS]}",
                f"no {missing}",
                raw=True,
            )
        for key in ("phoneme_buckets", "frame_buckets"):
            sizes = getattr(self, key)
            if list(sizes) != sorted(set(sizes)):
                raise invalid(key, "increasing sizes", list(sizes))
        w = self.window
        if w.frames - 2 * w.overlap <= 0:
            raise invalid(
                "window.overlap", f"less than frames / 2 ({w.frames / 2:g})", w.overlap
            )
        for key, sizes in (("first", (w.first or w.frames,)), ("sizes", w.sizes)):
            if any(size - 2 * w.overlap <= 0 for size in sizes):
                raise invalid(
                    f"window.{key}",
                    f"sizes above 2 * overlap = {2 * w.overlap}",
                    list(sizes) if key == "sizes" else sizes[0],
                )
        if self.frame_buckets[-1] <= 2 * self.flow_context:
            raise invalid(
                "frame_buckets",
                f"a largest bucket > 2 * flow_context = {2 * self.flow_context}",
                list(self.frame_buckets),
            )


class RequestExtra(msgspec.Struct, frozen=True):
    """The ``SynthesisOptions.extra`` keys this engine understands."""

    noise_scale: Noise | None = None
    noise_w: Noise | None = None
    length_scale: Length | None = None
    normalize_audio: bool | None = None

    def __post_init__(self) -> None:
        _finite_length(self.length_scale)


def _finite_length(v: float | None) -> None:
    if v is not None and not math.isfinite(v):
        raise invalid("length_scale", "a finite number > 0", v)
