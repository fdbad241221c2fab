"""What a `piper-vits` bundle's `params` hold, and the per-request scales.

The converter (scripts/piper/convert.py) writes `PiperParams.to_dict()` into
voice.yaml; the engine reads it back with `from_dict`, which validates every
field before any graph is touched, so a bad bundle fails with the field named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from daemon.engine.bundle import BundleError

# Piper's special symbols (piper/const.py): pad after every phoneme, BOS, EOS.
PAD: Final = "_"
BOS: Final = "^"
EOS: Final = "$"
# phoneme_type values of a Piper voice config this engine can phonemize:
# espeak-ng IPA, or raw codepoints (piper/config.py PhonemeType).
PHONEME_TYPES: Final = ("espeak", "text")
# Keys of SynthesisOptions.extra this engine understands.
EXTRA_KEYS: Final = ("noise_scale", "noise_w", "length_scale")
# Upper bounds for the noise scales a request may set: Piper voices ship
# 0.333-0.8; far above that the prior sample is noise, not speech.
MAX_NOISE: Final = 2.0
# Encoder outputs the pipeline reads, by name (scripts/piper/graphs.py encoder).
ENC_OUTPUTS: Final = ("m_p", "logs_p", "dp_cond")


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

    @property
    def graph_keys(self) -> tuple[str, ...]:
        return tuple(self.graph_needs())

    def graph_needs(self) -> dict[str, dict[str, tuple[int, ...] | None]]:
        """Every graph the pipeline runs, with the shapes it feeds (None: read
        whatever the graph gives).  ``PiperGraphs`` checks these at load and
        ``Bundle.verify`` checks the manifest against them."""
        c, w = self.channels, self.window
        needs: dict[str, dict[str, tuple[int, ...] | None]] = {}
        for p in self.phoneme_buckets:
            needs[enc_key(p)] = {
                "ids": (1, p),
                "x_mask": (1, 1, p),
                **dict.fromkeys(ENC_OUTPUTS),
            }
        for f in self.frame_buckets:
            needs[flow_key(f)] = {"z_p": (1, c, f), "y_mask": (1, 1, f), "z": None}
        needs[dec_key(w)] = {"z": (1, c, w), "frame_mask": (1, 1, w), "audio": None}
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
            "window": {"frames": self.window, "overlap": self.overlap},
            "sdp": self.sdp,
            "vowel_clusters": [list(c) for c in self.vowel_clusters],
            "phoneme_id_map": {k: list(v) for k, v in self.phoneme_id_map.items()},
        } | (
            {"attribution": dict(zip(("name", "url"), self.attribution))}
            if self.attribution
            else {}
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "params") -> PiperParams:
        r = _Fields(data, where)
        window = r.mapping("window")
        w = _Fields(window, f"{where}.window")
        id_map = {}
        for phoneme, ids in r.mapping("phoneme_id_map").items():
            if not isinstance(ids, list) or not all(_is_index(i) for i in ids):
                raise BundleError(
                    f"{where}.phoneme_id_map[{phoneme!r}]: want a list of ids"
                )
            id_map[str(phoneme)] = tuple(ids)
        for special in (PAD, BOS, EOS):
            if special not in id_map:
                raise BundleError(f"{where}.phoneme_id_map: no {special!r} entry")
        clusters = r.get("vowel_clusters", list) if "vowel_clusters" in data else []
        credit = None
        if "attribution" in data:
            a = _Fields(r.mapping("attribution"), f"{where}.attribution")
            credit = (a.text("name"), a.text("url"))
        params = cls(
            phoneme_type=r.text("phoneme_type"),
            espeak_voice=r.text("espeak_voice"),
            phoneme_id_map=id_map,
            vowel_clusters=tuple(tuple(str(p) for p in c) for c in clusters),
            noise_scale=r.number("noise_scale"),
            length_scale=r.number("length_scale"),
            noise_w=r.number("noise_w"),
            hop=r.count("hop"),
            channels=r.count("channels"),
            phoneme_buckets=r.sizes("phoneme_buckets"),
            frame_buckets=r.sizes("frame_buckets"),
            flow_context=r.count("flow_context", minimum=0),
            window=w.count("frames"),
            overlap=w.count("overlap", minimum=0),
            sdp=r.text("sdp"),
            attribution=credit,
        )
        if params.phoneme_type not in PHONEME_TYPES:
            raise BundleError(
                f"{where}.phoneme_type {params.phoneme_type!r}: this engine "
                f"phonemizes {PHONEME_TYPES}"
            )
        if params.window - 2 * params.overlap <= 0:
            raise BundleError(f"{where}.window: overlap leaves no frames to keep")
        if params.frame_buckets[-1] <= 2 * params.flow_context:
            raise BundleError(f"{where}.frame_buckets: largest <= 2 * flow_context")
        return params


@dataclass(frozen=True)
class Scales:
    """Per-request VITS scales (Piper's `scales` input: noise, length, noise_w)."""

    noise_scale: float
    length_scale: float
    noise_w: float

    @classmethod
    def for_request(
        cls, params: PiperParams, speed: float, extra: Mapping[str, Any]
    ) -> Scales:
        """The voice's scales, `extra` overrides, then length divided by speed."""
        unknown = sorted(set(extra) - set(EXTRA_KEYS))
        if unknown:
            raise ValueError(
                f"piper-vits: unknown option(s) {unknown}; known: {list(EXTRA_KEYS)}"
            )
        values = {
            "noise_scale": params.noise_scale,
            "length_scale": params.length_scale,
            "noise_w": params.noise_w,
        }
        for key, value in extra.items():
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ValueError(f"piper-vits: {key} must be a number, got {value!r}")
            values[key] = float(value)
        for key in ("noise_scale", "noise_w"):
            if not (math.isfinite(values[key]) and 0.0 <= values[key] <= MAX_NOISE):
                raise ValueError(
                    f"piper-vits: {key} {values[key]} outside [0, {MAX_NOISE}]"
                )
        if not (math.isfinite(values["length_scale"]) and values["length_scale"] > 0):
            raise ValueError(
                f"piper-vits: length_scale must be > 0, got {values['length_scale']}"
            )
        values["length_scale"] /= speed
        return cls(**values)


def _is_index(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


class _Fields:
    """Typed reads from the params mapping; errors name the field."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise BundleError(f"{where}: expected a mapping, got {type(data).__name__}")
        self.data, self.where = data, where

    def get(self, key: str, kind: Any, what: str = "") -> Any:
        if key not in self.data:
            raise BundleError(f"{self.where}: missing field {key!r}")
        value = self.data[key]
        if not isinstance(value, kind):
            raise BundleError(f"{self.where}.{key}: want a {what or kind.__name__}")
        return value

    def text(self, key: str) -> str:
        value = self.get(key, str)
        if not value:
            raise BundleError(f"{self.where}.{key}: must not be empty")
        return value

    def mapping(self, key: str) -> Mapping[str, Any]:
        return self.get(key, Mapping)  # type: ignore[no-any-return]

    def number(self, key: str) -> float:
        value = self.get(key, int | float, "number")
        if isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise BundleError(f"{self.where}.{key}: want a finite number >= 0")
        return float(value)

    def count(self, key: str, minimum: int = 1) -> int:
        value = self.get(key, int)
        if isinstance(value, bool) or value < minimum:
            raise BundleError(f"{self.where}.{key}: want an integer >= {minimum}")
        return value

    def sizes(self, key: str) -> tuple[int, ...]:
        value = self.get(key, list)
        if (
            not value
            or not all(_is_index(v) and v > 0 for v in value)
            or value != sorted(set(value))
        ):
            raise BundleError(f"{self.where}.{key}: want increasing positive sizes")
        return tuple(value)
