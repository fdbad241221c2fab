"""A tiny real decoder for the toolkit's tests: one attention layer exported to
ONNX per KV length, run on the runtime's CPU backend (and the simulator).

Graph I/O follows the decode graphs the toolkit serves (GPT-SoVITS
``t2s_decode_L``, Qwen3 ``asr_decode``): x [1,1,W], k_cache / v_cache
[1,H,L,dh], additive mask [1,1,1,L] -> logits [1,V], k_new / v_new [1,H,1,dh];
its prefill (the same weights) x [1,P,W], mask [1,1,P,P] -> logits of every
row [1,P,V], k / v [1,H,P,dh].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

WIDTH, HEADS, VOCAB = 16, 2, 24
HEAD_DIM = WIDTH // HEADS
BUCKETS = (8, 16)
PREFILLS = (4, 8)
MASK_VALUE = -100.0
#: the weights' seed: the same in every graph, prefill and decode
SEED = 3


def decode_io(length: int) -> dict[str, tuple[int, ...]]:
    cache = (1, HEADS, length, HEAD_DIM)
    new = (1, HEADS, 1, HEAD_DIM)
    return {
        "x": (1, 1, WIDTH),
        "k_cache": cache,
        "v_cache": cache,
        "mask": (1, 1, 1, length),
        "logits": (1, VOCAB),
        "k_new": new,
        "v_new": new,
    }


def prefill_io(length: int) -> dict[str, tuple[int, ...]]:
    kv = (1, HEADS, length, HEAD_DIM)
    return {
        "x": (1, length, WIDTH),
        "mask": (1, 1, length, length),
        "logits": (1, length, VOCAB),
        "k": kv,
        "v": kv,
    }


def _weights():  # type: ignore[no-untyped-def]
    import torch
    from torch import nn

    class Weights(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            g = torch.Generator().manual_seed(SEED)
            self.qkv = nn.Parameter(torch.randn(3 * WIDTH, WIDTH, generator=g) / 4)
            self.head = nn.Parameter(torch.randn(VOCAB, WIDTH, generator=g))

    return Weights


def export_decode(path: Path, length: int) -> Path:
    import torch

    class Decode(_weights()):  # type: ignore[misc]
        def forward(self, x, k_cache, v_cache, mask):  # type: ignore[no-untyped-def]
            q, k, v = (x[0] @ self.qkv.T).reshape(3, HEADS, 1, HEAD_DIM).unbind(0)
            scale = HEAD_DIM**-0.5
            cached = (k_cache[0] @ q.transpose(1, 2)).transpose(1, 2) * scale
            own = (q * k).sum(-1, keepdim=True) * scale
            p = torch.softmax(torch.cat([cached + mask[0], own], -1), -1)
            attn = p[..., :length] @ v_cache[0] + p[..., length:] * v
            h = attn.reshape(1, WIDTH) + x[0]
            return h @ self.head.T, k[None], v[None]

    io = decode_io(length)
    args = tuple(torch.zeros(io[n]) for n in ("x", "k_cache", "v_cache", "mask"))
    torch.onnx.export(
        Decode().eval(), args, str(path), dynamo=False, opset_version=17,
        input_names=["x", "k_cache", "v_cache", "mask"],
        output_names=["logits", "k_new", "v_new"],
    )  # fmt: skip
    return path


def export_prefill(path: Path, length: int) -> Path:
    """Causal attention over ``length`` rows with the decode graphs' weights,
    so a decode step continues it exactly."""
    import torch

    class Prefill(_weights()):  # type: ignore[misc]
        def forward(self, x, mask):  # type: ignore[no-untyped-def]
            qkv = (x[0] @ self.qkv.T).reshape(length, 3, HEADS, HEAD_DIM)
            q, k, v = qkv.permute(1, 2, 0, 3).unbind(0)
            scores = q @ k.transpose(1, 2) * HEAD_DIM**-0.5 + mask[0]
            attn = torch.softmax(scores, -1) @ v
            h = attn.transpose(0, 1).reshape(length, WIDTH) + x[0]
            return (h @ self.head.T)[None], k[None], v[None]

    io = prefill_io(length)
    args = (torch.zeros(io["x"]), torch.zeros(io["mask"]))
    torch.onnx.export(
        Prefill().eval(), args, str(path), dynamo=False, opset_version=17,
        input_names=["x", "mask"], output_names=["logits", "k", "v"],
    )  # fmt: skip
    return path


@pytest.fixture(scope="session")
def prefill_onnx(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("ar_prefill")
    return {n: export_prefill(out / f"prefill_{n}.onnx", n) for n in PREFILLS}


@pytest.fixture(scope="session")
def decode_onnx(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("ar_decode")
    return {n: export_decode(out / f"decode_{n}.onnx", n) for n in BUCKETS}


@pytest.fixture
def cpu_runners(decode_onnx: dict[int, Path]):  # type: ignore[no-untyped-def]
    """Fresh runners per test (bound buffers belong to one test)."""
    from scripts.common.build.runners import cpu_runner

    return {n: cpu_runner(p, f"decode_{n}") for n, p in decode_onnx.items()}


@pytest.fixture(scope="session")
def embeddings() -> np.ndarray:
    """Token -> x row (the CPU-side table a real decoder would have)."""
    return np.random.default_rng(5).standard_normal((VOCAB, WIDTH)).astype(np.float32)
