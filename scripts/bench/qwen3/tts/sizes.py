"""Bundle bytes per graph of a full-size Qwen3-TTS-12Hz-0.6B bundle, and the
bytes one frame streams (scripts/bench/qwen3/tts/engine.py).

Parameters per graph are counted from upstream's module layout (docs/qwen3.md, TTS
components; :func:`check` builds upstream's own modules, one decoder layer each plus the
whole codec decoder and speaker encoder, and compares).  Dims: talker 28 layers,
1024 / 16 / 8 x 128, FFN 3072, codec vocab 3072, text 151,936 x 2048; code
predictor 5 layers of the same block, vocab 2048, 15 tables and heads (docs/qwen3.md,
TTS components; the FFN 3072 of both from ivan-digital/qwen3-asr-swift
docs/tts-model.md, which matches the design estimate's 0.88 GB / 161 MB).  The 12 Hz
codec decoder's config.json could not be read here (no checkpoint): ASSUMED hidden 512,
head_dim 64, FFN 1024, latent 1024, codebook_dim 512, decoder_dim 1536, 8 layers, as two
independent ports copy it from the published speech_tokenizer/config.json.

Bytes per parameter: fp16 weights (2 B), or a calibration (B/param of a compiled
graph) when the bench compiled one; a w8a16 code predictor holds its weights in
1 B (+ per-channel scales, negligible).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from scripts.bench.qwen3.sizes_common import BANDWIDTH_BPS, FP16, FP32

#: 12.5 codec frames per second of audio (24 kHz / 1920 samples per frame)
FRAMES_PER_S: Final = 12.5
GROUPS: Final = 16  # codebooks per frame (talker code0 + 15 predicted)
#: np.save header of a 2-D/3-D table
NPY_HEADER: Final = 128

#: ASSUMED published 12 Hz codec decoder (module docstring)
CODEC_FULL: Final[dict[str, Any]] = {
    "codebook_dim": 512, "hidden_size": 512, "head_dim": 64,
    "intermediate_size": 1024, "latent_dim": 1024, "decoder_dim": 1536,
    "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16,
    "codebook_size": 2048, "num_quantizers": 16,
}  # fmt: skip
#: upstream's Qwen3TTSSpeakerEncoderConfig defaults = docs/qwen3.md, TTS components
SPEAKER_FULL: Final[dict[str, Any]] = {}


@dataclass(frozen=True)
class Block:
    """One Qwen3 decoder stack (talker or code predictor)."""

    layers: int
    hidden: int = 1024
    heads: int = 16
    kv_heads: int = 8
    head_dim: int = 128
    intermediate: int = 3072
    vocab: int = 3072


@dataclass(frozen=True)
class Dims:
    talker: Block = Block(28)
    predictor: Block = Block(5, vocab=2048)
    text_hidden: int = 2048
    text_vocab: int = 151_936
    prefill: tuple[int, ...] = (64, 256)
    kv_len: int = 1024
    #: codec windows (frames T incl. left context) the bundle holds
    codec_windows: tuple[int, ...] = (325,)
    #: frames of audio a window yields (T minus its left context)
    codec_yield: tuple[int, ...] = (300,)
    codec: dict[str, Any] = field(default_factory=lambda: dict(CODEC_FULL))
    speaker: dict[str, Any] = field(default_factory=lambda: dict(SPEAKER_FULL))
    #: x-vector mel frame buckets (24 kHz, hop 256: 94 frames/s)
    xvector_frames: tuple[int, ...] = (282, 469, 750, 938)


#: --quick: tiny widths (the tests' tiny model: docs/qwen3.md, tiny models, team brief)
TINY: Final = Dims(
    talker=Block(2, 64, 4, 2, 16, 128, 1152),
    predictor=Block(2, 64, 4, 2, 16, 128, 128),
    text_hidden=48, text_vocab=600, prefill=(64,), kv_len=192,
    codec_windows=(16,), codec_yield=(12,),
    codec={**CODEC_FULL, "codebook_dim": 32, "hidden_size": 32, "head_dim": 16,
           "intermediate_size": 64, "latent_dim": 32, "decoder_dim": 48,
           "num_hidden_layers": 2, "num_attention_heads": 2,
           "num_key_value_heads": 2, "codebook_size": 128},
    speaker={"enc_channels": [32, 32, 32, 32, 96], "enc_dim": 64,
             "enc_attention_channels": 16, "enc_se_channels": 16},
    xvector_frames=(282,),
)  # fmt: skip


def _linear(n_in: int, n_out: int, bias: bool = False) -> int:
    return n_in * n_out + (n_out if bias else 0)


def layer_params(b: Block) -> int:
    """One decoder layer: q/k/v/o (no bias), q/k RMSNorm over head_dim,
    SwiGLU, the two RMSNorms (modeling_qwen3_tts.py Qwen3TTS*DecoderLayer)."""
    q, kv = b.heads * b.head_dim, b.kv_heads * b.head_dim
    attn = _linear(b.hidden, q) + 2 * _linear(b.hidden, kv) + _linear(q, b.hidden)
    return attn + 2 * b.head_dim + 3 * _linear(b.hidden, b.intermediate) + 2 * b.hidden


def talker_params(d: Dims) -> int:
    """The talker graphs (prefill and decode alike): layers, final norm, codec_head."""
    t = d.talker
    return t.layers * layer_params(t) + t.hidden + _linear(t.hidden, t.vocab)


def predictor_params(d: Dims, heads: int = GROUPS - 1) -> int:
    """cp_step: layers, final norm, ``heads`` lm_heads (the contract stacks all
    15 in the graph), small_to_mtp_projection when the widths differ."""
    p, t = d.predictor, d.talker
    proj = 0 if p.hidden == t.hidden else _linear(t.hidden, p.hidden, True)
    return (p.layers * layer_params(p) + p.hidden + heads * _linear(p.hidden, p.vocab)
            + proj)  # fmt: skip


def text_proj_params(d: Dims) -> int:
    """Qwen3TTSTalkerResizeMLP: Dt -> Dt (+ bias), silu, -> Ht (+ bias)."""
    h = d.text_hidden
    return _linear(h, h, True) + _linear(h, d.talker.hidden, True)


def cpu_tables(d: Dims) -> dict[str, int]:
    """Elements of the CPU embedding tables (cpu/*.npy)."""
    t, p = d.talker, d.predictor
    return {
        "cpu/text_embedding.npy": d.text_vocab * d.text_hidden,
        "cpu/codec_embedding.npy": t.vocab * t.hidden,
        "cpu/cp_embedding.npy": (GROUPS - 1) * p.vocab * t.hidden,
    }


@dataclass(frozen=True)
class SizeRow:
    member: str
    params: int
    nbytes: int
    how: str


def bundle_rows(
    d: Dims,
    counted: dict[str, int],
    per_param: float = FP16,
    cp_per_param: float | None = None,
) -> list[SizeRow]:
    """Per-member bundle bytes at ``per_param`` bytes/parameter (fp16 weights:
    2; a compiled calibration otherwise); ``cp_per_param`` for the code
    predictor (w8a16: ~1).  One graph per bucket: hexvoice cannot share weights
    between graphs (docs/qwen3.md, graph set)."""
    how = f"{per_param:.4f} B/param" + (" (fp16)" if per_param == FP16 else "")
    cp_pp = per_param if cp_per_param is None else cp_per_param
    tp = talker_params(d)
    rows = [SizeRow("text_proj", text_proj_params(d),
                    round(text_proj_params(d) * per_param), how)]  # fmt: skip
    rows += [SizeRow(f"talker_prefill_{n}", tp, round(tp * per_param), how)
             for n in d.prefill]  # fmt: skip
    rows.append(SizeRow(f"talker_decode_{d.kv_len}", tp, round(tp * per_param), how))
    cp = predictor_params(d)
    rows.append(SizeRow("cp_step", cp, round(cp * cp_pp), f"{cp_pp:.4f} B/param"))
    codec = counted["codec"]
    rows += [SizeRow(f"codec_{t}", codec, round(codec * per_param), how)
             for t in d.codec_windows]  # fmt: skip
    rows += [SizeRow(f"speaker_{f}", counted["speaker"],
                     round(counted["speaker"] * per_param), how + "; base only")
             for f in d.xvector_frames]  # fmt: skip
    rows += [SizeRow(name, n, NPY_HEADER + FP16 * n, "fp16 .npy")
             for name, n in cpu_tables(d).items()]  # fmt: skip
    return rows


def streamed(
    d: Dims,
    counted: dict[str, int],
    per_param: float = FP16,
    cp_per_param: float | None = None,
) -> list[tuple[str, int]]:
    """Bytes one frame (80 ms of audio) moves: one talker decode step at KV
    bucket ``kv_len`` (its weights once, the whole K/V bucket read: a static
    graph reads all L rows), 16 code-predictor calls (5 layers + the one head a
    call selects; its 16-row K/V), and the codec's weights per window spread
    over the frames the window yields."""
    t, p = d.talker, d.predictor
    cp_pp = per_param if cp_per_param is None else cp_per_param
    kv_t = 2 * t.layers * t.kv_heads * d.kv_len * t.head_dim * FP16
    io_t = (FP32 * (2 * t.hidden + d.kv_len + 2 * t.head_dim + t.vocab)
            + 2 * t.layers * t.kv_heads * t.head_dim * FP16)  # fmt: skip
    cp_w = predictor_params(d, heads=1)
    kv_p = 2 * p.layers * p.kv_heads * GROUPS * p.head_dim * FP16
    codec = max(round(counted["codec"] * per_param / y) for y in d.codec_yield)
    return [
        ("talker weights (decode graph)", round(talker_params(d) * per_param)),
        (f"talker K/V read at L={d.kv_len}", kv_t),
        ("talker I/O (x, mask, cos/sin, logits, h, k/v_new)", io_t),
        (f"predictor weights x {GROUPS} (5 layers + 1 head)",
         GROUPS * round(cp_w * cp_pp)),
        (f"predictor K/V read at {GROUPS} x {GROUPS}", GROUPS * kv_p),
        (f"codec weights / {min(d.codec_yield)} frames per window", codec),
    ]  # fmt: skip


def floor(parts: list[tuple[str, int]]) -> tuple[float, float]:
    """(ms per frame, real-time factor) at BANDWIDTH_BPS."""
    total = sum(n for _, n in parts)
    ms = 1e3 * total / BANDWIDTH_BPS
    return ms, ms * FRAMES_PER_S / 1e3
