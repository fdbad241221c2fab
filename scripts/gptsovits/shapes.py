"""Every static shape of the six GPT-SoVITS v2Pro NPU graphs, in one place.

The NPU (QNN HTP) only runs graphs with fixed shapes, so each graph is exported at
one size and the runtime pads/masks into it. The full-size numbers follow the
reference port (zhouzengming/gpt-sovits-qnn, export/common.py, see
docs/board.md, reference port graphs); the tiny variant sizes the graphs of
the synthetic test voice so the HTP simulator stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from daemon.engines.gptsovits.reference import spectrogram
from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MAX_REF_SECONDS,
    PROMPT_ZEROS,
    ReferenceParams,
)
from daemon.sdk.audio import fbank


class VocoderDims(Protocol):
    """The generator's config check_vocoder reads (``SovitsDims`` has it; a
    protocol, so the model modules can import these shapes without a circle)."""

    @property
    def upsample_rates(self) -> tuple[int, ...]: ...
    @property
    def upsample_kernels(self) -> tuple[int, ...]: ...
    @property
    def rb_kernels(self) -> tuple[int, ...]: ...
    @property
    def rb_dilations(self) -> tuple[tuple[int, ...], ...]: ...


# Additive attention-mask value for blocked positions: the reference port
# measured that -100 gives the same tokens as -1e4 and keeps fp16 dynamic range
# small.
MASK_VALUE = -100.0

# 25 Hz semantic tokens are upsampled x2 to the 50 Hz SoVITS latent frame rate
# (upstream SynthesizerTrn.decode: F.interpolate(..., scale 2, "nearest")).
FRAMES_PER_TOKEN = 2

# Upstream s2v2Pro.json data.hop_length / data.sampling_rate.
HOP_LENGTH = 640
SAMPLE_RATE = 32000

# Upstream SynthesizerTrn.decode default noise_scale (TTS.py does not expose it).
NOISE_SCALE = 0.5

#: export_static's external_data for every graph: one protobuf file each (bundle
#: onnx/<key>.onnx, as bundles built before); the largest, bert (22 of
#: chinese-roberta-large's 24 layers, 1.2 GB of fp32), is under protobuf's 2 GiB
EXTERNAL_DATA = False


@dataclass(frozen=True)
class GraphShapes:
    """Static sizes of the exported graphs.

    Names match docs/board.md, reference port graphs.
    """

    prefill_len: int  # P: text + prompt positions of t2s_prefill
    kv_buckets: tuple[int, ...]  # t2s_decode cache lengths L, ascending
    vits_frames: int  # FR: 50 Hz latent frames of vits_enc
    vits_phones: int  # TT: phones of vits_enc
    gen_window: int  # WIN: frames per vits_gen call
    gen_overlap: int  # OV: context frames kept on each side of a window
    bert_tokens: int  # BERT_S
    bert_layers: int  # BERT_LAYERS: hidden_states[-3] of a 24-layer BERT
    g2pw_rows: int  # G2PW batch rows
    g2pw_tokens: int  # G2PW tokens per row

    def __post_init__(self) -> None:
        if list(self.kv_buckets) != sorted(set(self.kv_buckets)) or not self.kv_buckets:
            raise ValueError(
                f"kv_buckets must be ascending and unique: {self.kv_buckets}"
            )
        if self.gen_window <= 2 * self.gen_overlap:
            raise ValueError(
                f"gen_window {self.gen_window} must exceed 2 x gen_overlap "
                f"{self.gen_overlap}"
            )
        # A full prompt plus a maximal segment (vits_frames / 2 tokens) must fit
        # the largest cache, otherwise the decode loop could overflow it.
        need = self.prefill_len + self.max_new_tokens
        if self.kv_len < need:
            raise ValueError(f"largest KV bucket {self.kv_len} < P + max tokens {need}")

    @property
    def kv_len(self) -> int:
        return self.kv_buckets[-1]

    @property
    def max_new_tokens(self) -> int:
        return self.vits_frames // FRAMES_PER_TOKEN

    @property
    def gen_step(self) -> int:
        """Frames each vocoder window contributes (its centre)."""
        return self.gen_window - 2 * self.gen_overlap

    def check_vocoder(self, dims: VocoderDims) -> float:
        """The SoVITS generator's receptive radius (frames, from its config);
        a ValueError with the numbers if gen_overlap does not cover it (the
        windowed decode would miss the 100 dB gate)."""
        from scripts.common.receptive_field import check_overlap, hifigan_radius

        radius = hifigan_radius(
            dims.upsample_rates,
            dims.upsample_kernels,
            dims.rb_kernels,
            dims.rb_dilations,
        )
        check_overlap(self.gen_overlap, radius, "vits_gen")
        return radius

    def kv_bucket_for(self, positions: int) -> int:
        """Smallest cache length that holds `positions` entries."""
        for bucket in self.kv_buckets:
            if positions <= bucket:
                return bucket
        raise ValueError(f"{positions} cache positions exceed the largest bucket")


# Reference port values; L=768 also fits P + 250 tokens (15 % faster,
# docs/board.md, port pitfalls, 13).
FULL = GraphShapes(
    prefill_len=512,
    kv_buckets=(384, 768, 1024),
    vits_frames=500,
    vits_phones=128,
    gen_window=96,
    gen_overlap=12,
    bert_tokens=128,
    bert_layers=22,
    g2pw_rows=8,
    g2pw_tokens=64,
)

# Synthetic test voice: same graph structure, small enough for the simulator.
# P must hold a 3 s reference prompt (~89 tokens incl. the appended silence) plus
# its phones and a short target; the largest KV bucket holds P + a full segment.
# g2pw tokens match the runtime's fixed batch (frontend/g2pw.py G2PW_TOKENS).
# The HTP simulator needs seconds per op at 32 kHz, so the vocoder window is
# 32 frames (20480 samples); the overlap of 6 frames still covers the tiny
# generator's receptive field (~4.5 frames), so windowing stays exact.
TINY = GraphShapes(
    prefill_len=160,
    kv_buckets=(192, 224),
    vits_frames=128,
    vits_phones=32,
    gen_window=32,
    gen_overlap=6,
    bert_tokens=32,
    bert_layers=2,
    g2pw_rows=8,
    g2pw_tokens=64,
)


@dataclass(frozen=True)
class ReferenceShapes:
    """Static sizes of the reference-side graphs (zero-shot voices; the bundle's
    ``params.reference``, daemon/engines/gptsovits/reference/params.py)."""

    #: 16 kHz samples of the ``hubert`` window: the longest accepted reference
    #: plus the 9600 zeros upstream appends (TTS._set_prompt_semantic)
    hubert_samples: int
    #: linear-spectrogram frames of ``ref_enc``: the longest reference at 32 kHz
    #: over hop 640 (spectrogram_torch gives samples // hop frames; 500)
    spec_frames: int
    #: kaldi fbank frames of ``sv``: the longest reference at 16 kHz, 25 ms
    #: frames every 10 ms with snip_edges (1 + (n - 400) // 160; 998)
    fbank_frames: int

    def params(self, sv_dim: int) -> ReferenceParams:
        """The bundle's ``params.reference`` (``sv_dim``: the SoVITS model's)."""
        return ReferenceParams(
            hubert_samples=self.hubert_samples,
            spec_frames=self.spec_frames,
            fbank_frames=self.fbank_frames,
            sv_dim=sv_dim,
        )


# Upstream's longest reference (10 s) as ref_enc's and sv's frames (H2).
_SPEC_FRAMES = spectrogram.frames_of(int(MAX_REF_SECONDS * SAMPLE_RATE))
_FBANK_FRAMES = fbank.frames_of(int(MAX_REF_SECONDS * HUBERT_RATE))
# Upstream's longest reference (10 s at 16 kHz) + int(32000 * 0.3) zeros.
_HUBERT_WINDOW = int(MAX_REF_SECONDS * HUBERT_RATE) + PROMPT_ZEROS
FULL_REFERENCE = ReferenceShapes(
    hubert_samples=_HUBERT_WINDOW, spec_frames=_SPEC_FRAMES, fbank_frames=_FBANK_FRAMES
)
# Tiny: references up to 4 s (the bundle's Cloning.max_seconds follows).  The
# HTP compile of the block-matmul HuBERT grows faster than its window: the tiny
# model took 425-660 s at the full 10.6 s window, 18 s at this 4.6 s one, and
# the suite compiles it cold on every fresh clone.
TINY_REF_SECONDS = 4
TINY_REFERENCE = ReferenceShapes(
    hubert_samples=TINY_REF_SECONDS * HUBERT_RATE + PROMPT_ZEROS,
    spec_frames=spectrogram.frames_of(TINY_REF_SECONDS * SAMPLE_RATE),
    fbank_frames=fbank.frames_of(TINY_REF_SECONDS * HUBERT_RATE),
)
