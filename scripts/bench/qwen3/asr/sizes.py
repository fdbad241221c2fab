"""Bundle bytes per graph of a full-size Qwen3-ASR-0.6B bundle, and the bytes a
decode step streams (scripts/bench/qwen3/asr/engine.py).

Parameters per graph are counted from upstream's module layout (checked against
upstream's own modules whenever the calibration model is built).  Compiling
the 28-layer decoder here is too slow and large (~1.2 GB per graph, docs/qwen3.md,
export findings), so bytes/parameter are calibrated on what does compile: the
whole encoder window at real width, and a 1-layer decode step with the 151,936-row head
(random weights, upstream modules, the pipeline's own export + compile).  The
28-layer graphs' bytes are then computed from their parameters.

Dims: the text decoder as docs/qwen3.md, text decoder (ckpt: 28 layers, vocab 151,936;
widths Qwen3-0.6B-like: 1024 / 16 / 8 x 128 / 3072).  The audio encoder's config.json
could not be read here (no checkpoint): ASSUMED d_model 896, 18 layers, 14 heads,
FFN 3584, downsample 480, output 1024, n_window 50 / n_window_infer 800, the
0.6B defaults that two independent Swift ports ship (ivan-digital/qwen3-asr-swift
docs/asr-model.md; FluidInference/FluidAudio Qwen3ASRConfiguration.swift).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from scripts.bench.qwen3.sizes_common import (
    FP16,
    FP32,
    mrope_section,
    numel,
)

#: ASSUMED real audio encoder (see the module docstring for the sources)
AUDIO_FULL: Final[dict[str, Any]] = {
    "num_mel_bins": 128, "encoder_layers": 18, "encoder_attention_heads": 14,
    "encoder_ffn_dim": 3584, "d_model": 896, "downsample_hidden_size": 480,
    "n_window": 50, "n_window_infer": 800, "max_source_positions": 1500,
    "output_dim": 1024,
}  # fmt: skip
#: tiny encoder for --quick (scripts/qwen3/asr/tiny.py's shape, C = 4)
AUDIO_TINY: Final[dict[str, Any]] = {
    **AUDIO_FULL, "encoder_layers": 1, "encoder_attention_heads": 4,
    "encoder_ffn_dim": 128, "d_model": 64, "downsample_hidden_size": 16,
    "n_window_infer": 400, "output_dim": 64,
}  # fmt: skip


@dataclass(frozen=True)
class Text:
    layers: int = 28
    hidden: int = 1024
    heads: int = 16
    kv_heads: int = 8
    head_dim: int = 128
    intermediate: int = 3072
    vocab: int = 151_936
    prefill: int = 512
    kv_len: int = 1024


#: --quick: the stand-in's QUICK_DIMS (scripts/bench/qwen3/asr/engine.py)
TEXT_TINY: Final = Text(2, 64, 4, 2, 32, 128, 3000, 256, 384)


def config(text: Text, audio: dict[str, Any]) -> Any:
    from qwen_asr.core.transformers_backend import Qwen3ASRConfig

    section = mrope_section(text.head_dim)
    return Qwen3ASRConfig(thinker_config={
        "audio_config": dict(audio),
        "text_config": {
            "hidden_size": text.hidden, "intermediate_size": text.intermediate,
            "num_hidden_layers": text.layers, "num_attention_heads": text.heads,
            "num_key_value_heads": text.kv_heads, "head_dim": text.head_dim,
            "vocab_size": text.vocab, "rope_theta": 1_000_000.0,
            "rope_scaling": {"rope_type": "default", "mrope_section": section,
                             "interleaved": True, "mrope_interleaved": True},
            "tie_word_embeddings": True,
        },
        "audio_token_id": text.vocab - 1, "audio_start_token_id": text.vocab - 2,
    }, torch_dtype="float32")  # fmt: skip


def model(cfg: Any) -> Any:
    from qwen_asr.core.transformers_backend import Qwen3ASRForConditionalGeneration

    return Qwen3ASRForConditionalGeneration(cfg).float().eval().requires_grad_(False)


def _linear(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


def graph_params(text: Text, audio: dict[str, Any]) -> dict[str, int]:
    """Parameters in each graph, counted from upstream's module layout
    (modeling_qwen3_asr.py; :func:`calibrate` checks them on the real modules):
    the decoder graphs hold the layers, the final norm and the head."""
    t, h, a = text, text.hidden, audio
    q, kv = t.heads * t.head_dim, t.kv_heads * t.head_dim
    attn = _linear(h, q, False) + 2 * _linear(h, kv, False) + _linear(q, h, False)
    layer = attn + 2 * t.head_dim + 3 * _linear(h, t.intermediate, False) + 2 * h
    decoder = t.layers * layer + h + t.vocab * h
    d, c, f = a["d_model"], a["downsample_hidden_size"], a["encoder_ffn_dim"]
    freq = (((a["num_mel_bins"] + 1) // 2 + 1) // 2 + 1) // 2
    stem = 10 * c + 2 * (9 * c * c + c) + _linear(c * freq, d, False)
    enc_layer = 4 * _linear(d, d) + _linear(d, f) + _linear(f, d) + 4 * d
    encoder = (stem + a["encoder_layers"] * enc_layer + 2 * d + _linear(d, d)
               + _linear(d, a["output_dim"]))  # fmt: skip
    return {"encoder": encoder, "prefill": decoder, "decode": decoder,
            "embed": t.vocab * h}  # fmt: skip


def calibrate(text: Text, audio: dict[str, Any], work: Path, cache: Path | None,
              target: str) -> dict[str, tuple[int, int, float]]:  # fmt: skip
    """Compile the encoder window and a 1-layer decode: name -> (params, bin
    bytes, compile seconds); ValueError if upstream's modules hold another
    number of parameters than :func:`graph_params` counts."""
    import torch

    from scripts.common.qnn_compile import compile_onnx
    from scripts.qwen3.asr import export

    one = replace(text, layers=1)
    counts = graph_params(one, audio)
    work.mkdir(parents=True, exist_ok=True)
    sources = {"encoder": work / "encoder.onnx", "decode": work / "decode_1layer.onnx"}
    if not all(p.is_file() for p in sources.values()):
        torch.manual_seed(0)
        upstream = model(config(one, audio))
        th = upstream.thinker
        have = {
            "encoder": numel(th.audio_tower),
            "decode": numel(th.model.layers, th.model.norm, th.lm_head),
        }
        if any(have[k] != counts[k] for k in have):
            raise ValueError(f"parameter count {counts} != upstream's {have}")
        export.export_encoder(upstream, sources["encoder"])
        export.export_text(
            upstream, "decode", one.kv_len, sources["decode"], torch.float16
        )
        del upstream, th
    out = {}
    for name, src in sources.items():
        c = compile_onnx(src, work / "bins", name=name, target=target, cache_dir=cache)
        # c.seconds: the compile's own time (also when the cache answered)
        out[name] = (counts[name], c.bin_path.stat().st_size, c.seconds)
    return out


@dataclass(frozen=True)
class SizeRow:
    graph: str
    params: int
    nbytes: int
    how: str


def bundle_rows(text: Text, audio: dict[str, Any], calib: dict | None) -> list[SizeRow]:
    """Per-graph bundle bytes: compiled where the full graph was, else computed
    from its parameters at the calibrated decode bytes/parameter (no
    calibration: fp16 weights alone, 2 B/param)."""
    full = graph_params(text, audio)
    if calib is None:
        per_param = float(FP16)
        rows = [SizeRow("encoder", full["encoder"], FP16 * full["encoder"],
                        "computed (fp16 weights, uncalibrated)")]  # fmt: skip
    else:
        p_dec, b_dec, _ = calib["decode"]
        per_param = b_dec / p_dec
        p_enc, b_enc, _ = calib["encoder"]
        rows = [SizeRow("encoder", p_enc, b_enc, "compiled")]
    for name, length in (("prefill", text.prefill), ("decode", text.kv_len)):
        rows.append(SizeRow(f"{name}_{length}", full[name],
                            round(full[name] * per_param),
                            f"computed ({per_param:.4f} B/param)"))  # fmt: skip
    # np.save of a float16 [V, H] table: 128-byte header + the rows
    rows.append(
        SizeRow(
            "cpu/embed_tokens.npy",
            full["embed"],
            128 + FP16 * full["embed"],
            "computed (fp16 .npy)",
        )
    )
    return rows


def streamed(text: Text, decode_bytes: int) -> list[tuple[str, int]]:
    """Bytes one decode step moves at KV bucket ``kv_len``: the weights once,
    the K/V caches read, the I/O written and read."""
    t = text
    kv = 2 * t.layers * t.kv_heads * t.kv_len * t.head_dim * FP16
    io = (FP32 * (t.hidden + t.kv_len + 2 * t.head_dim + t.vocab)
          + 2 * t.layers * t.kv_heads * t.head_dim * FP16)  # fmt: skip
    return [("weights (decode graph)", decode_bytes), (f"K/V read at L={t.kv_len}", kv),
            ("I/O (x, mask, cos/sin, logits, k/v_new)", io)]  # fmt: skip
