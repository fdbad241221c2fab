"""Measure the code predictor's graph layout at full width (whether its 15
embedding tables and heads go in graphs or on the CPU is left to measurement;
the 2-token prefill vs step calls).

Random weights at the 0.6B checkpoint's predictor shape (docs/qwen3.md, TTS components:
5 layers, hidden 1024, 16/8 heads, head_dim 128, vocab 2048, talker hidden 1024), built
by upstream's own class, exported with scripts/qwen3/tts/graphs/predictor.py, timed on
onnxruntime CPU (the bundle's CPU backend; the NPU's times differ, the ratios
and bytes are what decide):

- heads in the graph (cp_step: `head` gathers one of the 15 stacked heads)
  vs heads on the CPU (the graph outputs h; numpy does h @ lm_head[k].T);
- the frame's first two rows as one 2-row prefill graph vs two cp_step calls.

    python -m scripts.qwen3.tts.graphs.cp_measure [--repeat 20] [--work DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scripts.common.build.onnx_export import export_static
from scripts.qwen3.common import decoder
from scripts.qwen3.common.decoder_export import (
    PREFILL_INPUTS,
    PREFILL_OUTPUTS,
    prefill_args,
)
from scripts.qwen3.tts.graphs import predictor
from scripts.qwen3.tts.upstream import import_qwen_tts

#: the 0.6B checkpoints' code predictor (docs/qwen3.md, TTS components; upstream's
#: config defaults)
FULL_PREDICTOR = {
    "vocab_size": 2048,
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 5,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_code_groups": 16,
}
FULL_TALKER_HIDDEN = 1024
STEPS_PER_FRAME = 16


class _Holder(nn.Module):
    """What predictor.py reads off a talker: .code_predictor, .config.hidden_size."""

    def __init__(self, cp: nn.Module, hidden: int) -> None:
        super().__init__()
        self.code_predictor = cp
        self.config = type("Config", (), {"hidden_size": hidden})()


def full_width_predictor(seed: int = 0) -> nn.Module:
    up = import_qwen_tts()
    cfg = up.configuration.Qwen3TTSTalkerConfig(
        code_predictor_config=FULL_PREDICTOR, hidden_size=FULL_TALKER_HIDDEN
    )
    torch.manual_seed(seed)
    cp = up.modeling.Qwen3TTSTalkerCodePredictorModelForConditionalGeneration(
        cfg.code_predictor_config, cfg
    )
    return _Holder(cp.float().eval(), FULL_TALKER_HIDDEN)


class CpPrefill(nn.Module):
    """The 2-row alternative: x [1,2,Ht] → lm_head[0] logits of row 1, k/v."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        cp = predictor.predictor_of(model)
        self.proj = cp.small_to_mtp_projection
        stack = decoder.Qwen3Stack(cp.model.layers, cp.model.norm, cp.lm_head[0])
        self.prefill = decoder.Prefill(stack)

    def forward(self, x, mask, cos, sin, last):  # noqa: ANN001, ANN201 (export only)
        return self.prefill(self.proj(x), mask, cos, sin, last)


def _median_us(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _session(path: Path) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _bytes(path: Path) -> int:
    data = path.with_name(path.name + ".data")
    return path.stat().st_size + (data.stat().st_size if data.exists() else 0)


def _feeds(args: tuple[torch.Tensor, ...], names: tuple[str, ...]) -> dict[str, Any]:
    return {n: a.numpy() for n, a in zip(names, args)}


def measure(work: Path, repeat: int) -> dict[str, float]:
    model = full_width_predictor()
    cp = predictor.predictor_of(model)
    with_heads = work / "cp_step.onnx"
    no_heads = work / "cp_step_h.onnx"
    two_rows = work / "cp_prefill2.onnx"
    predictor.export_cp_step(model, with_heads)
    export_static(
        predictor.CpStep(model, heads=False),
        predictor.step_args(model, heads=False),
        predictor.INPUTS[:-1],
        predictor.HIDDEN_OUTPUTS,
        no_heads,
    )
    # full width: predictor hidden = talker hidden (the projection is Identity)
    dims = predictor.predictor_stack(model).dims
    export_static(
        CpPrefill(model),
        prefill_args(dims, 2),
        PREFILL_INPUTS,
        PREFILL_OUTPUTS,
        two_rows,
    )
    step = _feeds(predictor.step_args(model), predictor.INPUTS)
    step["x"] = np.random.default_rng(0).standard_normal(step["x"].shape, np.float32)
    s_heads, s_h, s_two = _session(with_heads), _session(no_heads), _session(two_rows)
    step_h = {k: v for k, v in step.items() if k != "head"}
    prefill = _feeds(prefill_args(dims, 2), PREFILL_INPUTS)
    w32 = [h.weight.detach().numpy().T.copy() for h in cp.lm_head]
    w16 = [w.astype(np.float16) for w in w32]
    h = s_h.run(None, step_h)[0]
    out = {
        "cp_step_heads_in_graph_us": _median_us(
            lambda: s_heads.run(None, step), repeat
        ),
        "cp_step_h_only_us": _median_us(lambda: s_h.run(None, step_h), repeat),
        "cpu_head_fp32_us": _median_us(lambda: h @ w32[3], repeat * 5),
        "cpu_head_fp16_us": _median_us(lambda: h.astype(np.float16) @ w16[3], repeat),
        "prefill_2rows_us": _median_us(lambda: s_two.run(None, prefill), repeat),
        "bytes_cp_step_heads": _bytes(with_heads),
        "bytes_cp_step_h_only": _bytes(no_heads),
        "bytes_cp_prefill2": _bytes(two_rows),
        "bytes_heads_fp16": sum(w.nbytes for w in w16),
    }
    return out


def report(m: dict[str, float]) -> str:
    """The numbers per call, per frame (16 predictor calls) and in bytes."""
    step, h_only = m["cp_step_heads_in_graph_us"], m["cp_step_h_only_us"]
    head32, head16 = m["cpu_head_fp32_us"], m["cpu_head_fp16_us"]
    two = m["prefill_2rows_us"]
    mb = {k: m[k] / 1e6 for k in m if k.startswith("bytes")}
    lines = [
        f"heads in graph: {step:.0f} us/call, {16 * step / 1e3:.1f} ms/frame, "
        f"graph {mb['bytes_cp_step_heads']:.1f} MB fp32; host ~0 per step",
        f"heads on CPU: graph {h_only:.0f} us/call "
        f"({mb['bytes_cp_step_h_only']:.1f} MB)"
        f" + host h@W {head32:.0f} us fp32 / {head16:.0f} us fp16 per step",
        f"  host per frame (15 heads): {15 * head32 / 1e3:.2f} ms fp32, "
        f"{15 * head16 / 1e3:.2f} ms fp16; heads {mb['bytes_heads_fp16']:.1f} MB fp16",
        f"2-row prefill: {two:.0f} us vs 2 calls {2 * step:.0f} us; "
        f"+{mb['bytes_cp_prefill2']:.1f} MB fp32 graph",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(report(measure(work, args.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
