"""A ``qwen3-tts`` stand-in bundle for scripts/bench/qwen3/tts/engine.py: full-size
graph I/O, next to no compute.

The engine's host side of a frame (talker step: codec + 15 predictor-table rows
summed with the trailing text row, RoPE row, K/V write-back, mask, logits
processors; 16 code-predictor calls with their own K/V; frame assembly; codec
window scheduling) runs on the engine's own code with buffers of the real sizes
(docs/qwen3.md, TTS components; graph set: talker 28 layers, 8 KV heads x 128, hidden
1024, vocab 3072, KV 1024; predictor 5 layers, 16 rows, vocab 2048; fp16 K/V), without a
model, which the x86 simulator runs at seconds per step.  As qwen3/asr/standin.py, every
input feeds an output (no compiler drops one), outputs have the real shapes
and dtypes, the logits are a small projection of x and cos (so greedy walks
through the codes instead of repeating one), and the talker's specials and EOS
get -1e4 so every run lasts ``max_new_tokens`` frames.  Every graph comes from
the engine's own I/O table (daemon/engines/qwen3/tts/graphio.py).

The text vocabulary is small (a byte-level BPE of the ASCII letters and the
specials): text rows are looked up only while the prompt is built, never per
frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from daemon.engines.qwen3.tts import graphio
from daemon.engines.qwen3.tts.params import (
    CODEC_EMBEDDING,
    CP_EMBEDDING,
    TEXT_EMBEDDING,
    TOKENIZER,
    TtsParams,
)
from daemon.sdk.bundles.manifest import Bundle
from scripts.bench.qwen3.standin_common import (
    BLOCKED,
    LETTERS,
    PROJ,
    byte_level_bpe,
    save_table,
)
from scripts.bench.qwen3.tts.sizes import Dims
from scripts.bench.standin import OPSET, compile_graphs

F32, F16, I32 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT32
#: dtype per input / output name (everything else float32)
DTYPES: Final = {"k_cache": F16, "v_cache": F16, "k": F16, "v": F16,
                 "k_new": F16, "v_new": F16, "head": I32, "codes": I32}  # fmt: skip
SPECIALS: Final = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tts_pad>",
                   "<tts_text_bos>", "<tts_text_eod>",
                   "assistant", "user", "system")  # fmt: skip
#: real-like codec specials (docs/qwen3.md, TTS special ids; think ids near them)
CODEC_IDS: Final = {"codec_pad": 2148, "codec_bos": 2149, "codec_eos": 2150,
                    "codec_think": 2154, "codec_nothink": 2155,
                    "codec_think_bos": 2156, "codec_think_eos": 2157}  # fmt: skip


def tokenizer_json(path: Path) -> tuple[Path, dict[str, int]]:
    """Byte-level BPE: the 256 bytes, every 2-letter ASCII pair, the specials."""
    from itertools import product

    from tokenizers import AddedToken

    tok = byte_level_bpe(["".join(w) for w in product(LETTERS, repeat=2)])
    tok.add_special_tokens([AddedToken(s, special=True) for s in SPECIALS])
    path.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(path))
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    return path, {**ids, "\n": tok.token_to_id("\u010a")}  # byte-level newline


def params(d: Dims, text_vocab: int, ids: dict[str, int], window: int,
           first: int, max_new: int) -> TtsParams:  # fmt: skip
    t, p = d.talker, d.predictor

    def shape(b: Any) -> dict[str, Any]:
        return {"hidden": b.hidden, "head_dim": b.head_dim, "layers": b.layers,
                "kv_heads": b.kv_heads, "vocab": b.vocab, "rope_theta": 1e6,
                "attention_scaling": 1.0}  # fmt: skip

    return TtsParams.from_mapping({
        "kind": "custom_voice", "talker": shape(t),
        "text": {"hidden": d.text_hidden, "rows": 32, "vocab": text_vocab},
        "predictor": {**shape(p), "groups": 16, "rope_theta": 1e4},
        "prefill_buckets": list(d.prefill), "kv_buckets": [d.kv_len],
        "tokens": {"tts_pad": ids["<tts_pad>"], "tts_bos": ids["<tts_text_bos>"],
                   "tts_eos": ids["<tts_text_eod>"], "im_start": ids["<|im_start|>"],
                   "assistant": ids["assistant"], "newline": ids["\n"],
                   **{k: _codec_id(v, t.vocab) for k, v in CODEC_IDS.items()}},
        "languages": {"english": _codec_id(2050, t.vocab),
                      "chinese": _codec_id(2055, t.vocab)},
        "speakers": {"serena": {"id": _codec_id(3066, t.vocab), "dialect": None}},
        "sampling": {"do_sample": False, "subtalker_do_sample": False,
                     "max_new_tokens": max_new, "suppress": [t.vocab - 1024, t.vocab]},
        "embedding_dtype": "float16",
        "codec": {"sample_rate": 24000, "samples_per_frame": 1920,
                  "chunk_frames": 300, "left_context": 25,
                  "windows": [{"frames": window, "context": window // 4}],
                  "first_frames": first},
        "xvector": None,
    }, where="stand-in")  # fmt: skip


def _codec_id(real: int, vocab: int) -> int:
    """A real id (vocab 3072) moved into a smaller test vocabulary's top 1024."""
    return real if vocab == 3072 else vocab - 3072 + real


def _vi(name: str, shape: tuple[int, ...]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, DTYPES.get(name, F32), list(shape))


class _Graph:
    """Nodes and initializers of one stand-in graph, with fresh names."""

    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self.n = 0

    def op(self, op: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        self.n += 1
        name = out or f"t{self.n}"
        self.nodes.append(helper.make_node(op, list(inputs), [name], **attrs))
        return name

    def const(self, value: np.ndarray) -> str:
        self.n += 1
        self.inits.append(numpy_helper.from_array(value, f"c{self.n}"))
        return f"c{self.n}"

    def i64(self, *values: int) -> str:
        return self.const(np.array(values, np.int64))

    def scalar_mean(self, name: str) -> str:
        """mean of an input as float32 [] (feeds an output: never dropped)."""
        x = name if DTYPES.get(name, F32) == F32 else self.op("Cast", name, to=F32)
        return self.op("ReduceMean", x, keepdims=0)

    def row(self, x: str, rows: int, cols: int, take: int) -> str:
        """x [.., rows, cols] -> its first ``take`` values of every row [rows, take]."""
        flat = self.op("Reshape", x, self.i64(rows, cols))
        return self.op("Slice", flat, self.i64(0), self.i64(take), self.i64(1))

    def kv(
        self, x: str, rows: int, width: int, shape: tuple[int, ...], out: str
    ) -> str:
        """[rows, >= Kh*hd] -> float16 ``shape`` [layers, Kh, rows, hd]."""
        layers, kh, _, hd = shape
        part = self.row(x, rows, width, kh * hd)
        r = self.op("Reshape", part, self.i64(1, rows, kh, hd))
        p = self.op("Transpose", r, perm=[0, 2, 1, 3])
        t = self.op("Tile", p, self.i64(layers, 1, 1, 1))
        return self.op("Cast", t, to=F16, out=out)

    def logits(self, x: str, cos: str, width: int, hd: int, vocab: int,
               blocked: tuple[int, int] | None, extra: list[str]) -> None:  # fmt: skip
        w = self.rng.standard_normal((2 * PROJ, vocab)) / np.sqrt(PROJ)
        bias = np.zeros((1, vocab), np.float32)
        if blocked is not None:
            bias[0, blocked[0] : blocked[1]] = BLOCKED
        z = self.op("Concat", self.row(x, 1, width, PROJ), self.row(cos, 1, hd, PROJ),
                    axis=1)  # fmt: skip
        acc = self.op("Add", self.op("MatMul", z, self.const(w.astype(np.float32))),
                      self.const(bias))  # fmt: skip
        for name in extra:
            acc = self.op("Add", acc, self.scalar_mean(name))
        self.nodes[-1].output[0] = "logits"


def graph(
    key: str, io: dict[str, tuple[int, ...]], p: TtsParams, seed: int
) -> onnx.ModelProto:
    """The stand-in for graph ``key`` with the engine's I/O table ``io``."""
    g = _Graph(seed)
    outs = {"logits", "h", "k", "v", "k_new", "v_new", "y", "wav", "xvec"}
    inputs = [n for n in io if n not in outs]
    outputs = [n for n in io if n in outs]
    if key.startswith("codec_"):
        s = g.scalar_mean("codes")
        g.op("Expand", g.op("Mul", s, g.const(np.float32(1e-4))), g.i64(*io["wav"]),
             out="wav")  # fmt: skip
    elif key == "text_proj":
        rows, dt = io["x"]
        w = g.rng.standard_normal((dt, io["y"][1])) / np.sqrt(dt)
        g.op("MatMul", "x", g.const(w.astype(np.float32)), out="y")
    else:
        talker = key.startswith("talker_")
        dec = p.talker if talker else p.predictor
        width, hd = io["x"][-1], dec.head_dim
        rows = io["x"][1]
        x1, cos1 = "x", "cos"
        if rows > 1:  # prefill: the `last` row of x and cos
            last = g.op("Reshape", "last", g.i64(1, 1, rows))
            x1, cos1 = g.op("MatMul", last, "x"), g.op("MatMul", last, "cos")
        extra = ["mask", "sin"] + (["head"] if "head" in io else [])
        blocked = (p.predictor.vocab, p.talker.vocab) if talker else None
        if "h" in io:
            h = g.op("Reshape", x1, g.i64(1, width))
            g.op("Add", h, g.scalar_mean("mask"), out="h")
        g.logits(x1, cos1, width, hd, dec.vocab, blocked, extra)
        if rows > 1:
            g.kv("x", rows, width, io["k"], "k")
            g.kv("x", rows, width, io["v"], "v")
        else:
            for name in ("k", "v"):
                new = g.kv("x", 1, width, io[f"{name}_new"], f"{name}_x")
                first = g.op("Slice", f"{name}_cache", g.i64(0), g.i64(1), g.i64(2))
                g.op("Add", new, first, out=f"{name}_new")
    model = helper.make_model(
        helper.make_graph(g.nodes, f"standin_{key}", [_vi(n, io[n]) for n in inputs],
                          [_vi(n, io[n]) for n in outputs], g.inits),
        opset_imports=[helper.make_opsetid("", OPSET)],
    )  # fmt: skip
    onnx.checker.check_model(model)
    return model


def standin_bundle(
    root: Path, d: Dims, *, window: int = 16, first: int = 4, max_new: int = 200,
    cache_dir: Path | None = None,
) -> Bundle:  # fmt: skip
    """The stand-in bundle at ``root/bundle`` (graphs compiled for the simulator,
    with their ONNX for the CPU backend)."""
    from tokenizers import Tokenizer

    from scripts.common import bundling

    out = root / "bundle"
    tok, ids = tokenizer_json(out / TOKENIZER)
    text_vocab = Tokenizer.from_file(str(tok)).get_vocab_size()
    p = params(d, text_vocab, ids, window, first, max_new)
    sources = {}
    for i, (key, io) in enumerate(graphio.graph_needs(p).items()):
        sources[key] = root / "src" / f"{key}.onnx"
        sources[key].parent.mkdir(parents=True, exist_ok=True)
        onnx.save(graph(key, dict(io), p, seed=i), str(sources[key]))
    graphs = compile_graphs(root, sources, cache_dir)
    rng = np.random.default_rng(0)
    t, pr = p.talker, p.predictor
    tables = {TEXT_EMBEDDING: (text_vocab, p.text.hidden),
              CODEC_EMBEDDING: (t.vocab, t.hidden),
              CP_EMBEDDING: (pr.groups - 1, pr.vocab, t.hidden)}  # fmt: skip
    for name, shape in tables.items():
        save_table(out / name, rng, shape)
    return bundling.finish(
        out, engine="qwen3-tts", name="bench-standin", sample_rate=24000,
        languages=("en", "zh"), graphs=graphs, params=p.to_dict(), task="tts",
    )  # fmt: skip
