"""A ``qwen3-asr`` stand-in bundle for scripts/bench/qwen3/asr/engine.py:
full-size graph I/O, next to no compute.

The engine's host side of a decode step (embedding row, RoPE row, K/V
write-back, mask, greedy choice, text streaming) is measured on the engine's own
code with buffers of the real sizes (docs/qwen3.md, graph set: 28 layers, 8 KV heads x
128, hidden 1024, vocab 151,936; prefill 512, KV 1024), without a full model, which
the x86 simulator runs at seconds per step.  As scripts/bench/gptsovits/standin.py,
every input feeds an output (no compiler drops one) and outputs have the real
shapes and dtypes (fp16 K/V), so the engine binds and writes back exactly as for
a real bundle.  The decode logits are a small projection of the token's
embedding and cos row, so greedy walks through the vocabulary instead of
repeating one id; specials get -1e4 so no step stops early.

The tokenizer is a synthetic byte-level BPE with the real vocabulary size
(letter merges, so every piece is whole UTF-8) and Qwen's special tokens
after it, as in the real tokenizer (151,643 BPE ids, then specials).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from daemon.engines.qwen3.asr.params import (
    ENCODER,
    AsrParams,
    MelParams,
    PromptParams,
    TokenIds,
    decode_key,
    prefill_key,
)
from daemon.sdk.bundles.manifest import Bundle
from scripts.bench.qwen3.standin_common import (
    BLOCKED,
    BYTE_TOKENS,
    LETTERS,
    PROJ,
    byte_level_bpe,
    save_table,
)
from scripts.bench.standin import compile_graphs, i64, save, vi

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
#: docs/qwen3.md, ASR prompt and special ids: the chat template the checkpoint renders,
#: and the forced suffix
TEMPLATE: Final = (
    "<|im_start|>system\n{context}<|im_end|>\n<|im_start|>user\n"
    "<|audio_start|>{audio}<|audio_end|><|im_end|>\n<|im_start|>assistant\n"
)
SUFFIX: Final = "language {language}<asr_text>"
SPECIALS: Final = ("<|endoftext|>", "<|im_start|>", "<|im_end|>",
                   "<|audio_start|>", "<|audio_end|>", "<|audio_pad|>")  # fmt: skip


@dataclass(frozen=True)
class Dims:
    """Decoder and front-end sizes (defaults: Qwen3-ASR-0.6B).

    docs/qwen3.md, text decoder; graph set.
    """

    layers: int = 28
    heads: int = 16
    kv_heads: int = 8
    head_dim: int = 128
    hidden: int = 1024
    intermediate: int = 3072
    vocab: int = 151_936
    bpe: int = 151_643  # Qwen2 tokenizer: BPE ids below, specials from here
    prefill: int = 512
    kv_len: int = 1024
    n_mels: int = 128
    window_chunks: int = 8  # n_window_infer 800 / (2 * n_window 50)


def params(d: Dims) -> AsrParams:
    ids = {s: d.bpe + i for i, s in enumerate(SPECIALS)}
    return AsrParams(
        hidden=d.hidden, head_dim=d.head_dim, layers=d.layers, kv_heads=d.kv_heads,
        vocab=d.vocab, rope_theta=1_000_000.0, rope_scaling_factor=1.0,
        mel=MelParams(d.n_mels, 400, 160, 16000, 100, 13, d.window_chunks),
        prefill_buckets=(d.prefill,), kv_buckets=(d.kv_len,),
        tokens=TokenIds(ids["<|audio_pad|>"], ids["<|audio_start|>"],
                        ids["<|audio_end|>"], ids["<|im_start|>"], ids["<|im_end|>"],
                        (ids["<|im_end|>"], ids["<|endoftext|>"])),
        prompt=PromptParams(TEMPLATE, SUFFIX), languages=("Chinese", "English"),
    )  # fmt: skip


def tokenizer_json(d: Dims, path: Path, seed: int = 0) -> Path:
    """A byte-level BPE of ``d.bpe`` ids: the 256 bytes, every 2- and 3-letter
    string over a-z and space, then random 4-letter ones (each merges its
    prefix with its last letter), and the specials after them."""
    from itertools import product

    from tokenizers import AddedToken

    words = ["".join(w) for n in (2, 3) for w in product(LETTERS, repeat=n)]
    fours = ["".join(w) for w in product(LETTERS, repeat=4)]
    rng = np.random.default_rng(seed)
    room = max(d.bpe - BYTE_TOKENS, 0)
    words = (words + [fours[i] for i in rng.permutation(len(fours))])[:room]
    tok = byte_level_bpe(words)
    tok.add_special_tokens([AddedToken(s, special=True) for s in SPECIALS])
    tok.add_tokens([AddedToken("<asr_text>", special=False)])
    ids = [tok.token_to_id(s) for s in SPECIALS]
    if ids != list(range(d.bpe, d.bpe + len(SPECIALS))):
        raise ValueError(f"specials at {ids}, expected from {d.bpe}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    return path


def _kv(name: str, src: str, rows: int, d: Dims) -> list[onnx.NodeProto]:
    """[1, rows, Kh*hd] float -> [layers, Kh, rows, hd] float16."""
    return [
        helper.make_node("Reshape", [src, f"kv_shape_{rows}"], [f"{name}_r"]),
        helper.make_node("Transpose", [f"{name}_r"], [f"{name}_p"], perm=[0, 2, 1, 3]),
        helper.make_node("Tile", [f"{name}_p", "kv_reps"], [f"{name}_t"]),
        helper.make_node("Cast", [f"{name}_t"], [name], to=TensorProto.FLOAT16),
    ]


def _kv_consts(d: Dims, rows: int) -> list[onnx.TensorProto]:
    return [
        i64("kv_reps", [d.layers, 1, 1, 1]),
        i64(f"kv_shape_{rows}", [1, rows, d.kv_heads, d.head_dim]),
    ]


def _logits(d: Dims, x: str, cos: str, extra: list[str]) -> tuple[list, list]:
    """logits [1, V] = [x[:PROJ], cos[:PROJ]] @ W + bias (+ means of ``extra``)."""
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((2 * PROJ, d.vocab)) / np.sqrt(PROJ)).astype(np.float32)
    bias = np.zeros((1, d.vocab), np.float32)
    bias[0, d.bpe :] = BLOCKED
    inits = [numpy_helper.from_array(w, "proj"), numpy_helper.from_array(bias, "bias"),
             i64("p0", [0]), i64("p1", [PROJ]), i64("last_axis", [-1]),
             i64("row", [1, PROJ])]  # fmt: skip
    nodes = [
        helper.make_node("Slice", [x, "p0", "p1", "last_axis"], ["xs"]),
        helper.make_node("Slice", [cos, "p0", "p1", "last_axis"], ["cs"]),
        helper.make_node("Reshape", ["xs", "row"], ["xs2"]),
        helper.make_node("Reshape", ["cs", "row"], ["cs2"]),
        helper.make_node("Concat", ["xs2", "cs2"], ["z"], axis=1),
        helper.make_node("MatMul", ["z", "proj"], ["raw"]),
        helper.make_node("Add", ["raw", "bias"], ["acc0"]),
    ]
    for i, name in enumerate(extra):
        nodes.append(helper.make_node("ReduceMean", [name], [f"m{i}"], keepdims=0))
        nodes.append(helper.make_node("Add", [f"acc{i}", f"m{i}"], [f"acc{i + 1}"]))
    nodes[-1].output[0] = "logits"
    return nodes, inits


def encoder_graph(path: Path, d: Dims) -> Path:
    c, w, f32 = d.window_chunks, 13 * d.window_chunks, TensorProto.FLOAT
    nodes = [helper.make_node("ReduceMean", [n], [f"{n}_m"], keepdims=0)
             for n in ("mel", "stem_mask1", "stem_mask2")]  # fmt: skip
    nodes += [
        helper.make_node("Add", ["mel_m", "stem_mask1_m"], ["s1"]),
        helper.make_node("Add", ["s1", "stem_mask2_m"], ["s2"]),
        helper.make_node("Reshape", ["key_mask", "col"], ["kcol"]),
        helper.make_node("Add", ["kcol", "s2"], ["k2"]),
        helper.make_node("Tile", ["k2", "reps"], ["audio"]),
    ]
    graph = helper.make_graph(
        nodes, "asr_encoder_standin",
        [vi("mel", f32, [c, 1, d.n_mels, 100]), vi("stem_mask1", f32, [c, 1, 1, 50]),
         vi("stem_mask2", f32, [c, 1, 1, 25]), vi("key_mask", f32, [1, 1, 1, w])],
        [vi("audio", f32, [w, d.hidden])],
        [i64("col", [w, 1]), i64("reps", [1, d.hidden])],
    )  # fmt: skip
    return save(graph, path)


def prefill_graph(path: Path, d: Dims) -> Path:
    p, h, hd, f32 = d.prefill, d.hidden, d.head_dim, TensorProto.FLOAT
    kv = [d.layers, d.kv_heads, p, hd]
    logit_nodes, inits = _logits(d, "x_last", "cos_last", ["mask", "sin"])
    nodes = [
        helper.make_node("Reshape", ["last", "lrow"], ["l3"]),
        helper.make_node("MatMul", ["l3", "x"], ["x_last"]),  # [1, 1, H]
        helper.make_node("MatMul", ["l3", "cos"], ["cos_last"]),
        *logit_nodes,
        *_kv("k", "x", p, d),
        helper.make_node("Slice", ["x", "p0", "kvw", "last_axis"], ["xv"]),
        *_kv("v", "xv", p, d),
    ]
    graph = helper.make_graph(
        nodes, "asr_prefill_standin",
        [vi("x", f32, [1, p, h]), vi("mask", f32, [1, 1, p, p]),
         vi("cos", f32, [1, p, hd]), vi("sin", f32, [1, p, hd]),
         vi("last", f32, [1, p])],
        [vi("logits", f32, [1, d.vocab]), vi("k", TensorProto.FLOAT16, kv),
         vi("v", TensorProto.FLOAT16, kv)],
        [*inits, *_kv_consts(d, p), i64("lrow", [1, 1, p]),
         i64("kvw", [d.kv_heads * hd])],
    )  # fmt: skip
    return save(graph, path)


def decode_graph(path: Path, d: Dims) -> Path:
    n, h, hd, f32, f16 = d.kv_len, d.hidden, d.head_dim, F32, F16
    cache, new = [d.layers, d.kv_heads, n, hd], [d.layers, d.kv_heads, 1, hd]
    logit_nodes, inits = _logits(d, "x", "cos", ["mask", "sin"])
    nodes = [
        *logit_nodes,
        helper.make_node("Slice", ["x", "p0", "kvw", "last_axis"], ["xk"]),
        *_kv("k_x", "xk", 1, d),
        *_kv("v_x", "xk", 1, d),
        helper.make_node("Slice", ["k_cache", "p0", "one", "axis2"], ["k_row"]),
        helper.make_node("Slice", ["v_cache", "p0", "one", "axis2"], ["v_row"]),
        helper.make_node("Add", ["k_x", "k_row"], ["k_new"]),
        helper.make_node("Add", ["v_x", "v_row"], ["v_new"]),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, f"asr_decode_standin_{n}",
        [vi("x", f32, [1, 1, h]), vi("k_cache", f16, cache),
         vi("v_cache", f16, cache), vi("mask", f32, [1, 1, 1, n]),
         vi("cos", f32, [1, 1, hd]), vi("sin", f32, [1, 1, hd])],
        [vi("logits", f32, [1, d.vocab]), vi("k_new", f16, new),
         vi("v_new", f16, new)],
        [*inits, *_kv_consts(d, 1), i64("one", [1]), i64("axis2", [2]),
         i64("kvw", [d.kv_heads * hd])],
    )  # fmt: skip
    return save(graph, path)


def standin_bundle(root: Path, d: Dims, cache_dir: Path | None = None) -> Bundle:
    """The stand-in bundle at ``root/bundle`` (graphs compiled for the simulator,
    with their ONNX for the CPU backend)."""
    from scripts.common import bundling

    p, out = params(d), root / "bundle"
    sources = {
        ENCODER: encoder_graph(root / "src" / "encoder.onnx", d),
        prefill_key(d.prefill): prefill_graph(root / "src" / "prefill.onnx", d),
        decode_key(d.kv_len): decode_graph(root / "src" / "decode.onnx", d),
    }
    graphs = compile_graphs(root, sources, cache_dir)
    rng = np.random.default_rng(0)
    save_table(out / "cpu" / "embed_tokens.npy", rng, (d.vocab, d.hidden))
    tokenizer_json(d, out / "text" / "tokenizer.json")
    return bundling.finish(
        out, engine="qwen3-asr", name="bench-standin", sample_rate=16000,
        languages=("zh", "en"), graphs=graphs, params=p.to_dict(), task="asr",
    )  # fmt: skip
