"""Calibration compiles for scripts/bench/qwen3/tts/engine.py: what the HTP binaries of
a full-width Qwen3-TTS really hold per parameter.

The whole code predictor step (cp_step: 5 full-width layers and the 15 stacked
heads, 110 M parameters) compiles here in seconds, fp16 and w8a16
(scripts/qwen3/tts/quant.py); the 28-layer talker does not (887 MB per graph),
so a 1-layer talker decode step with the codec head stands in for its bytes per
parameter.  Random weights (upstream's init), exported by the pipeline's own
export code (scripts/qwen3/tts/{talker,predictor}.py) and compiled by
scripts/common/qnn_compile.py.  The w8a16 calibration feeds are random rows of
a real row's scale (the bytes do not depend on them; parity is measured on
real prompts elsewhere).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np

from scripts.bench.qwen3.sizes_common import numel
from scripts.bench.qwen3.tts import modules, sizes
from scripts.bench.qwen3.tts.sizes import Dims

#: calibration feeds for the bytes-only w8a16 compile
CALIB_FEEDS: Final = 8
KV_BUCKET: Final = 1024


def _talker(d: Dims, layers: int) -> Any:
    """Upstream's talker (with its code predictor, all its layers) at full
    width, ``layers`` talker layers."""
    import torch

    torch.manual_seed(0)
    model = modules.talker(d, layers, predictor_layers=d.predictor.layers)
    return model.float().eval().requires_grad_(False)


def _feeds(onnx_path: Path, n: int) -> list[dict[str, np.ndarray]]:
    """Random cp_step feeds: rows of std 1, caches of std 1, growing masks."""
    import onnx

    from scripts.qwen3.tts.quant import input_dtypes

    model = onnx.load(str(onnx_path), load_external_data=False)
    shapes = {i.name: [x.dim_value for x in i.type.tensor_type.shape.dim]
              for i in model.graph.input}  # fmt: skip
    dtypes, rng, out = input_dtypes(onnx_path), np.random.default_rng(0), []
    for k in range(n):
        feed = {}
        for name, shape in shapes.items():
            if name == "mask":
                a = np.full(shape, -100.0, np.float32)
                a[..., : k + 1] = 0.0
            elif name == "head":
                a = np.array([k % (sizes.GROUPS - 1)], np.int32)
            else:
                a = rng.standard_normal(shape).astype(np.float32)
            feed[name] = a.astype(dtypes[name])
        out.append(feed)
    return out


def calibrate(d: Dims, work: Path, cache: Path | None, target: str
              ) -> dict[str, tuple[int, int, float]]:  # fmt: skip
    """name -> (params, bin bytes, compile seconds) of cp_step fp16, cp_step
    w8a16 and a 1-layer talker decode; ValueError if upstream's modules hold
    another number of parameters than sizes.py counts."""
    import torch

    from scripts.common.qnn_compile import compile_onnx
    from scripts.qwen3.tts import quant
    from scripts.qwen3.tts.graphs import predictor, talker

    work.mkdir(parents=True, exist_ok=True)
    one = Dims(talker=sizes.Block(1), predictor=d.predictor)
    talker1 = f"talker_decode_{KV_BUCKET}, 1 layer"
    counts = {"cp_step fp16": sizes.predictor_params(d),
              "cp_step w8a16": sizes.predictor_params(d),
              talker1: sizes.talker_params(one)}  # fmt: skip
    src = {"cp_step fp16": work / "cp_step.onnx",
           "cp_step w8a16": work / "cp_step_w8a16.onnx",
           talker1: work / "talker_decode_1layer.onnx"}  # fmt: skip
    if not all(p.is_file() for p in src.values()):
        model = _talker(d, layers=1)
        cp = model.code_predictor
        have = numel(cp.model.layers, cp.model.norm, cp.lm_head)
        if have != counts["cp_step fp16"]:
            raise ValueError(f"cp_step: {counts['cp_step fp16']} != upstream's {have}")
        f16 = torch.float16
        predictor.export_cp_step(model, src["cp_step fp16"], f16)
        talker.export_talker_decode(
            model, KV_BUCKET, src[f"talker_decode_{KV_BUCKET}, 1 layer"], f16
        )
        del model, cp
        feeds = _feeds(src["cp_step fp16"], CALIB_FEEDS)
        quant.quantize_cp_step(src["cp_step fp16"], feeds, src["cp_step w8a16"])
    out = {}
    for i, (name, path) in enumerate(src.items()):
        c = compile_onnx(path, work / "bins", name=f"g{i}", target=target,
                         cache_dir=cache)  # fmt: skip
        out[name] = (counts[name], c.bin_path.stat().st_size, c.seconds)
    return out
