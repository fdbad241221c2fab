"""Tiny ONNX graphs for the qnnrt tests (random weights, seconds to compile)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
#: uint16 QuantizeLinear/DequantizeLinear need opset 21.
QDQ16_OPSET = 21
IR_VERSION = 10
_RNG_SEED = 1234


def _save(graph: onnx.GraphProto, path: Path, opset: int = OPSET) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


def _vi(name: str, dtype: int, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def matmul_tanh(path: Path, n: int = 64) -> Path:
    """y = tanh(x @ W): the smallest real graph."""
    w = np.random.default_rng(_RNG_SEED).standard_normal((n, n)).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["m"]),
            helper.make_node("Tanh", ["m"], ["y"]),
        ],
        "matmul_tanh",
        [_vi("x", TensorProto.FLOAT, [1, n])],
        [_vi("y", TensorProto.FLOAT, [1, n])],
        [_init("W", (w / np.sqrt(n)).astype(np.float32))],
    )
    return _save(g, path)


def multi_io(path: Path) -> Path:
    """Three inputs, three outputs, with int32 and fp16 I/O.

    Declared input order (c, ids, a) differs from the order the nodes consume
    them, and output order (s, emb, p) from the order they are produced.
    """
    rng = np.random.default_rng(_RNG_SEED)
    table = rng.standard_normal((32, 16)).astype(np.float32)
    nodes = [
        helper.make_node("Mul", ["a", "a"], ["p"]),
        helper.make_node("Gather", ["table", "ids"], ["emb32"], axis=0),
        helper.make_node("Cast", ["emb32"], ["emb"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["c"], ["c32"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["c32", "axes"], ["s"], keepdims=1),
    ]
    g = helper.make_graph(
        nodes,
        "multi_io",
        [
            _vi("c", TensorProto.FLOAT16, [2, 8]),
            _vi("ids", TensorProto.INT32, [1, 4]),
            _vi("a", TensorProto.FLOAT, [3, 5]),
        ],
        [
            _vi("s", TensorProto.FLOAT, [2, 1]),
            _vi("emb", TensorProto.FLOAT16, [1, 4, 16]),
            _vi("p", TensorProto.FLOAT, [3, 5]),
        ],
        [_init("table", table), _init("axes", np.array([1], np.int64))],
    )
    return _save(g, path)


def qdq(path: Path, dtype: int = TensorProto.UINT8) -> Path:
    """Quantized I/O: uint8/uint16 in, dequantize → Add → Relu → quantize → out."""
    np_dtype = {TensorProto.UINT8: np.uint8, TensorProto.UINT16: np.uint16}[dtype]
    zp = np.array(128 if dtype == TensorProto.UINT8 else 32768, np_dtype)
    scale_in = np.array(0.05, np.float32)
    scale_out = np.array(0.03, np.float32)
    bias = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)
    nodes = [
        helper.make_node("QuantizeLinear", ["bias", "s_b", "zp"], ["bias_q"]),
        helper.make_node("DequantizeLinear", ["bias_q", "s_b", "zp"], ["bias_dq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_in", "zp"], ["x"]),
        helper.make_node("Add", ["x", "bias_dq"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s_out", "zp"], ["yq"]),
    ]
    g = helper.make_graph(
        nodes,
        "qdq",
        [_vi("xq", dtype, [1, 16])],
        [_vi("yq", dtype, [1, 16])],
        [
            _init("s_in", scale_in),
            _init("s_out", scale_out),
            _init("s_b", np.array(0.01, np.float32)),
            _init("zp", zp),
            _init("bias", bias),
        ],
    )
    return _save(g, path, QDQ16_OPSET if dtype == TensorProto.UINT16 else OPSET)


#: decode-graph dims: [layers, heads, L, dh] fp16 caches, width = heads * dh
KV_LAYERS, KV_HEADS, KV_LEN, KV_DH = 2, 2, 32, 8


def kv_decode(path: Path) -> Path:
    """One decode step of a tiny attention stack with fp16 K/V caches.

    Same shape contract as the T2S decode graph: the new token attends over
    [cache (masked) + itself]; the graph returns its k/v for the host to write
    into the caches at ``pos``.
    """
    import torch

    class Decode(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            width = KV_HEADS * KV_DH
            g = torch.Generator().manual_seed(_RNG_SEED)
            self.w = torch.nn.Parameter(
                torch.randn(KV_LAYERS, 4, width, width, generator=g) / width**0.5
            )

        def forward(self, x, k_cache, v_cache, mask):  # type: ignore[no-untyped-def]
            ks, vs = [], []
            scale = KV_DH**-0.5
            for layer in range(KV_LAYERS):
                w = self.w[layer]
                q = (x @ w[0]).view(KV_HEADS, 1, KV_DH)
                kn = (x @ w[1]).view(KV_HEADS, 1, KV_DH)
                vn = (x @ w[2]).view(KV_HEADS, 1, KV_DH)
                k = k_cache[layer].float()
                v = v_cache[layer].float()
                scores = torch.matmul(q, k.transpose(1, 2)) * scale + mask[0]
                own = (q * kn).sum(-1, keepdim=True) * scale
                p = torch.softmax(torch.cat([scores, own], -1), -1)
                o = torch.matmul(p[..., :-1], v) + p[..., -1:] * vn
                x = x + o.reshape(1, 1, -1) @ w[3]
                ks.append(kn)
                vs.append(vn)
            return x, torch.stack(ks).half(), torch.stack(vs).half()

    width = KV_HEADS * KV_DH
    cache = torch.zeros(KV_LAYERS, KV_HEADS, KV_LEN, KV_DH, dtype=torch.float16)
    args = (
        torch.zeros(1, 1, width),
        cache,
        cache.clone(),
        torch.zeros(1, 1, 1, KV_LEN),
    )
    torch.onnx.export(
        Decode().eval(),
        args,
        str(path),
        input_names=["x", "k_cache", "v_cache", "mask"],
        output_names=["y", "k_new", "v_new"],
        opset_version=OPSET,
        dynamo=False,
    )
    return path
