"""What a `piper-vits` bundle's `params` hold, and the per-request scales.

The converter (scripts/piper/convert.py) writes `PiperParams.to_dict()` into
voice.yaml; the engine reads it back with `from_dict`, which validates every
field before any graph is touched, so a bad bundle fails with the field named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from daemon.config.reader import read
from daemon.engines.piper.schema import (
    PIPER_SENTENCE_SILENCE_S,
    ParamsFile,
    RequestExtra,
)
from daemon.sdk.bundles.keys import BucketKey
from daemon.sdk.bundles.manifest import BundleError

# Encoder outputs the pipeline reads, by name (scripts/piper/graphs.py encoder).
ENC_OUTPUTS: Final = ("m_p", "logs_p", "dp_cond")


#: Graph keys by bucket: encoder by phonemes, flow by frames, decoder by window.
enc_key: Final = BucketKey("enc_P")
flow_key: Final = BucketKey("flow_F")
dec_key: Final = BucketKey("dec_W")


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
        f = read(data, ParamsFile, where=where, error=BundleError)
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
        e = read(extra, RequestExtra, where="piper-vits")
        length = params.length_scale if e.length_scale is None else e.length_scale
        return cls(
            noise_scale=params.noise_scale if e.noise_scale is None else e.noise_scale,
            length_scale=length / speed,
            noise_w=params.noise_w if e.noise_w is None else e.noise_w,
            normalize_audio=params.normalize_audio
            if e.normalize_audio is None
            else e.normalize_audio,
        )
