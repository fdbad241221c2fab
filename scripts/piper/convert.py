"""What a Piper conversion is given: its options, the voice's config as it is
read, and the context the build's stages share (scripts/piper/build.py).

The bundle a conversion writes (daemon/sdk/bundles/manifest.py, voice.yaml
format 1):

    voice.yaml           engine piper-vits; voice parameters under `params`
    graphs/enc_P{P}.bin  text encoder + SDP conditioning per phoneme bucket (NPU)
    graphs/flow_F{F}.bin reverse flow per frame bucket                     (NPU)
    graphs/dec_W{W}.bin  HiFiGAN on one W-frame window with a frame mask   (NPU)
    onnx/*.onnx          the same graphs at any length (onnxruntime CPU backend)
    cpu/sdp.npz          SDP spline-flow weights for the numpy port        (CPU)

Why the graph is cut where it is: cuts.py. The phoneme map, espeak voice and
scales come from the voice's own config (daemon/engines/piper/params.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.engines.piper.params import PiperParams, dec_key, enc_key, flow_key
from daemon.sdk.audio.windows import OVERLAP_FRAMES
from scripts.common.build.workdir import WorkDir
from scripts.common.onnx_surgery import ConversionError
from scripts.common.qnn_compile import TARGETS as QNN_TARGETS

TARGETS = tuple(QNN_TARGETS)
# Piper sentences are one espeak clause each: ids = 2 * phonemes + 3 (pad after
# each phoneme, BOS/EOS), so 512 ids cover ~250 phonemes.
PHONEME_BUCKETS = (64, 128, 256, 512)
# 22.05 kHz / 256 hop = 86 frames/s: 128 frames = 1.5 s ... 1024 = 11.9 s. Longer
# sentences run the largest flow in overlapped windows (flow_context).
FRAME_BUCKETS = (128, 256, 512, 1024)
# Decoder windows: steady 168 frames, within the v73's 8 MiB VTCM (peak op 48 KiB
# per frame -> <= 170); first 64, so first audio leaves after a short decode (a
# 32-frame graph ran at 15 dB SNR on the HTP simulator vs 29 dB for 64..168);
# tails in the size windows.plan picks. Oracle sentences: 1.22 frames computed
# per frame kept vs 1.37 with one W96 (scripts/bench/piper/windows.py).
DECODER_WINDOW = 168
FIRST_WINDOW = 64
TAIL_WINDOWS = (96, 128)
SDP_FILE = "cpu/sdp.npz"
# Piper's defaults for a config without `inference` (piper-tts config.py).
_NOISE_SCALE, _LENGTH_SCALE, _NOISE_W = 0.667, 1.0, 0.8
# Piper config phoneme types the engine can phonemize (schema.PHONEME_TYPES).
_PHONEME_TYPES = ("espeak", "text")


@dataclass(frozen=True)
class ConvertOptions:
    target: str = "simulator"
    phoneme_buckets: tuple[int, ...] = PHONEME_BUCKETS
    frame_buckets: tuple[int, ...] = FRAME_BUCKETS
    window: int = DECODER_WINDOW
    overlap: int = OVERLAP_FRAMES
    first_window: int | None = FIRST_WINDOW
    window_sizes: tuple[int, ...] = TAIL_WINDOWS

    @property
    def decoder_sizes(self) -> tuple[int, ...]:  # as PiperParams.decoder_sizes
        first = self.first_window or self.window
        return tuple(sorted({self.window, first, *self.window_sizes}))

    @property
    def graph_keys(self) -> tuple[str, ...]:
        """Every graph of the bundle, in manifest order."""
        return (
            *(enc_key(p) for p in self.phoneme_buckets),
            *(flow_key(f) for f in self.frame_buckets),
            *(dec_key(w) for w in self.decoder_sizes),
        )

    def validate(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        for name in ("phoneme_buckets", "frame_buckets"):
            buckets = getattr(self, name)
            if not buckets or list(buckets) != sorted(set(buckets)) or buckets[0] < 1:
                raise ValueError(f"{name} must be increasing positive sizes: {buckets}")
        for size in self.decoder_sizes:
            if size - 2 * self.overlap <= 0:
                raise ValueError(f"window {size} / overlap {self.overlap} invalid")


def progress(msg: str) -> None:
    """A build's progress line, on stderr."""
    print(f"[build-piper] {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class PiperBuild:
    """What every stage of a Piper build runs on: the voice, where the bundle
    goes, the options and the work dir (scripts/common/build/workdir.py:
    onnx_npu/ the static graphs compiled for the NPU, onnx/ their any-length
    twins for the CPU backend, bins/ the binaries, stage/ cpu/sdp.npz)."""

    voice: Path
    out: Path
    options: ConvertOptions
    work: WorkDir
    qnn_cache: Path | None = None
    log: Callable[[str], None] = field(default=progress, compare=False)

    @property
    def config_path(self) -> Path:
        return Path(f"{self.voice}.json")

    @property
    def sdp_file(self) -> Path:
        return self.work.stage / SDP_FILE


def read_config(voice: Path) -> dict[str, Any]:
    """The voice's .onnx.json, refused unless the engine can speak it."""
    config_path = Path(f"{voice}.json")
    if not Path(voice).is_file() or not config_path.is_file():
        raise ConversionError(f"need {voice} and {config_path}")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    kind = config.get("phoneme_type", "espeak")
    if kind not in _PHONEME_TYPES:
        raise ConversionError(
            f"{config_path}: phoneme_type {kind!r} is not supported "
            f"(the engine phonemizes {_PHONEME_TYPES})"
        )
    if int(config.get("num_speakers", 1)) > 1:
        raise ConversionError(f"{config_path}: multi-speaker voices are not supported")
    return config


def piper_params(
    config: Mapping[str, Any],
    options: ConvertOptions,
    hop: int,
    channels: int,
    flow_context: int,
) -> PiperParams:
    """The voice parameters of a bundle of ``options``: the config's phonemes,
    espeak voice and scales, the voice graph's hop and latent channels."""
    inference = config.get("inference", {})
    return PiperParams(
        phoneme_type=config.get("phoneme_type", "espeak"),
        espeak_voice=config["espeak"]["voice"],
        phoneme_id_map={k: tuple(v) for k, v in config["phoneme_id_map"].items()},
        vowel_clusters=tuple(tuple(c) for c in config.get("vowel_clusters", [])),
        noise_scale=float(inference.get("noise_scale", _NOISE_SCALE)),
        length_scale=float(inference.get("length_scale", _LENGTH_SCALE)),
        noise_w=float(inference.get("noise_w", _NOISE_W)),
        hop=hop,
        channels=channels,
        phoneme_buckets=options.phoneme_buckets,
        frame_buckets=options.frame_buckets,
        flow_context=flow_context,
        window=options.window,
        overlap=options.overlap,
        sdp=SDP_FILE,
        first_window=options.first_window,
        window_sizes=options.window_sizes,
    )
