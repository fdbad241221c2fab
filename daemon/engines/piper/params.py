"""What a `piper-vits` bundle's `params` hold, and the per-request scales.

The converter (scripts/piper/convert.py) writes `PiperParams.to_dict()` into
voice.yaml; the engine reads it back with `from_dict`, which validates every
field before any graph is touched, so a bad bundle fails with the field named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final

import msgspec

from daemon.config.reader import invalid, read
from daemon.sdk.bundles.manifest import BundleError

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
# Encoder outputs the pipeline reads, by name (scripts/piper/graphs.py encoder).
ENC_OUTPUTS: Final = ("m_p", "logs_p", "dp_cond")
#: Silence after a sentence by default: none, as piper-tts (its CLI's
#: --sentence-silence defaults to 0.0) and wyoming-piper (no silence at all).
PIPER_SENTENCE_SILENCE_S: Final = 0.0
#: Longest sentence silence a voice may ask for: a pause, not a gap that looks
#: like the service stalled.
MAX_SENTENCE_SILENCE_S: Final = 10.0


def enc_key(phonemes: int) -> str:
    return f"enc_P{phonemes}"


def flow_key(frames: int) -> str:
    return f"flow_F{frames}"


def dec_key(frames: int) -> str:
    return f"dec_W{frames}"


@dataclass(frozen=True)
class PiperParams:
    """Everything the engine needs besides the graphs and the SDP weights."""

    phoneme_type: str
    espeak_voice: str
    phoneme_id_map: Mapping[str, tuple[int, ...]]
    vowel_clusters: tuple[tuple[str, ...], ...]
    noise_scale: float
    length_scale: float
    noise_w: float
    hop: int
    channels: int
    phoneme_buckets: tuple[int, ...]
    frame_buckets: tuple[int, ...]
    flow_context: int
    window: int
    overlap: int
    sdp: str  # bundle-relative path of the numpy SDP weights
    #: (name, url) the voice asks to be credited with (its MODEL_CARD's dataset)
    attribution: tuple[str, str] | None = None
    #: the decoder's first window (first audio waits for it); None: `window`
    first_window: int | None = None
    #: more compiled decoder sizes for the tails (windows.py `plan`); `window`
    #: is the steady size
    window_sizes: tuple[int, ...] = ()
    #: seconds of silence after each sentence but the last (piper's
    #: --sentence-silence)
    sentence_silence: float = PIPER_SENTENCE_SILENCE_S
    #: scale each sentence to a peak of 1, as piper-tts's SynthesisConfig
    #: (normalize_audio, on by default); its audio then leaves once the whole
    #: sentence is decoded
    normalize_audio: bool = True

    @property
    def decoder_sizes(self) -> tuple[int, ...]:
        """Every decoder window graph the bundle has, smallest first."""
        first = self.window if self.first_window is None else self.first_window
        return tuple(sorted({self.window, first, *self.window_sizes}))

    @property
    def graph_keys(self) -> tuple[str, ...]:
        return tuple(self.graph_needs())

    def graph_needs(self) -> dict[str, dict[str, tuple[int, ...] | None]]:
        """Every graph the pipeline runs, with the shapes it feeds (None: read
        whatever the graph gives).  ``PiperGraphs`` checks these at load and
        ``Bundle.verify`` checks the manifest against them."""
        c = self.channels
        needs: dict[str, dict[str, tuple[int, ...] | None]] = {}
        for p in self.phoneme_buckets:
            needs[enc_key(p)] = {
                "ids": (1, p),
                "x_mask": (1, 1, p),
                **dict.fromkeys(ENC_OUTPUTS),
            }
        for f in self.frame_buckets:
            needs[flow_key(f)] = {"z_p": (1, c, f), "y_mask": (1, 1, f), "z": None}
        for w in self.decoder_sizes:
            needs[dec_key(w)] = {
                "z": (1, c, w),
                "frame_mask": (1, 1, w),
                "audio": None,
            }
        return needs

    def to_dict(self) -> dict[str, Any]:
        return {
            "phoneme_type": self.phoneme_type,
            "espeak_voice": self.espeak_voice,
            "noise_scale": self.noise_scale,
            "length_scale": self.length_scale,
            "noise_w": self.noise_w,
            "hop": self.hop,
            "channels": self.channels,
            "phoneme_buckets": list(self.phoneme_buckets),
            "frame_buckets": list(self.frame_buckets),
            "flow_context": self.flow_context,
            "window": {"frames": self.window, "overlap": self.overlap}
            | ({"first": self.first_window} if self.first_window else {})
            | ({"sizes": list(self.window_sizes)} if self.window_sizes else {}),
            "sdp": self.sdp,
            "sentence_silence": self.sentence_silence,
            "normalize_audio": self.normalize_audio,
            "vowel_clusters": [list(c) for c in self.vowel_clusters],
            "phoneme_id_map": {k: list(v) for k, v in self.phoneme_id_map.items()},
        } | (
            {"attribution": dict(zip(("name", "url"), self.attribution))}
            if self.attribution
            else {}
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "params") -> PiperParams:
        f = read(data, _File, where=where, error=BundleError)
        return cls(
            phoneme_type=f.phoneme_type,
            espeak_voice=f.espeak_voice,
            phoneme_id_map=f.phoneme_id_map,
            vowel_clusters=f.vowel_clusters,
            noise_scale=f.noise_scale,
            length_scale=f.length_scale,
            noise_w=f.noise_w,
            hop=f.hop,
            channels=f.channels,
            phoneme_buckets=f.phoneme_buckets,
            frame_buckets=f.frame_buckets,
            flow_context=f.flow_context,
            window=f.window.frames,
            overlap=f.window.overlap,
            sdp=f.sdp,
            attribution=(f.attribution.name, f.attribution.url)
            if f.attribution
            else None,
            first_window=f.window.first,
            window_sizes=f.window.sizes,
            sentence_silence=f.sentence_silence,
            normalize_audio=f.normalize_audio,
        )


@dataclass(frozen=True)
class Scales:
    """Per-request VITS scales (Piper's `scales` input: noise, length, noise_w),
    and whether the request's sentences are peak-normalized."""

    noise_scale: float
    length_scale: float
    noise_w: float
    normalize_audio: bool = True

    @classmethod
    def for_request(
        cls, params: PiperParams, speed: float, extra: Mapping[str, Any]
    ) -> Scales:
        """The voice's scales, `extra` overrides, then length divided by speed."""
        e = read(extra, _Extra, where="piper-vits")
        length = params.length_scale if e.length_scale is None else e.length_scale
        return cls(
            noise_scale=params.noise_scale if e.noise_scale is None else e.noise_scale,
            length_scale=length / speed,
            noise_w=params.noise_w if e.noise_w is None else e.noise_w,
            normalize_audio=params.normalize_audio
            if e.normalize_audio is None
            else e.normalize_audio,
        )


# --- what voice.yaml `params` and a request's `extra` may hold ------------------
Text = Annotated[str, msgspec.Meta(min_length=1)]
Count = Annotated[int, msgspec.Meta(ge=1)]
Index = Annotated[int, msgspec.Meta(ge=0)]
#: Bucket sizes: positive (and increasing, checked by _File).
Sizes = Annotated[tuple[Count, ...], msgspec.Meta(min_length=1)]
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


class _File(msgspec.Struct, frozen=True):
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


class _Extra(msgspec.Struct, frozen=True):
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
