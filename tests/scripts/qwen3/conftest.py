"""Session fixtures: the tiny Qwen3-ASR model (upstream's classes, loaded from the
`tiny_asr_model` directory), its bundle params and its graphs exported once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: small buckets: a 20-token prompt and a few forced steps fit; the simulator
#: stays fast
PREFILL = 32
KV = 48


@dataclass(frozen=True)
class AsrGraphs:
    """fp32 graphs (the CPU backend's) and fp16-K/V ones (compiled for the NPU)."""

    encoder: Path
    prefill: Path
    decode: Path
    prefill_npu: Path
    decode_npu: Path


@pytest.fixture(scope="session")
def asr_build(tiny_asr_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The build's context over the tiny model (it loads upstream's model and
    processor once, and makes the bundle params the engine reads)."""
    pytest.importorskip("qwen_asr")
    from tests.qwen3_bundles import asr_context

    work = tmp_path_factory.mktemp("qwen3_asr_build")
    return asr_context(tiny_asr_model, work, PREFILL, KV)


@pytest.fixture(scope="session")
def asr_model(asr_build: Any) -> Any:
    """Upstream's Qwen3ASRForConditionalGeneration (fp32, eval)."""
    return asr_build.model


@pytest.fixture(scope="session")
def asr_params(asr_build: Any) -> Any:
    """The engine's AsrParams of a bundle with buckets PREFILL and KV."""
    from daemon.engines.qwen3.asr.params import AsrParams
    from scripts.qwen3.asr.pipeline.params import params

    return AsrParams.from_mapping(params(asr_build))


@pytest.fixture(scope="session")
def asr_graphs(asr_model: Any, tmp_path_factory: pytest.TempPathFactory) -> AsrGraphs:
    import torch

    from scripts.qwen3.asr import export

    d = tmp_path_factory.mktemp("qwen3_asr_onnx")
    f16 = torch.float16
    return AsrGraphs(
        encoder=export.export_encoder(asr_model, d / "encoder.onnx"),
        prefill=export.export_text(asr_model, "prefill", PREFILL, d / "prefill.onnx"),
        decode=export.export_text(asr_model, "decode", KV, d / "decode.onnx"),
        prefill_npu=export.export_text(
            asr_model, "prefill", PREFILL, d / "p16.onnx", f16
        ),
        decode_npu=export.export_text(asr_model, "decode", KV, d / "d16.onnx", f16),
    )
