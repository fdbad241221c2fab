"""Parity gates on the tiny test voice, and that a broken graph fails its gate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from scripts.common.build.onnx_export import GraphSpec
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import TINY
from scripts.gptsovits.verify import cpu as verify


def test_t2s_gate(t2s_model: T2SModel, tiny_graphs: dict[str, GraphSpec]) -> None:
    decode = {n: tiny_graphs[f"t2s_decode_L{n}"].path for n in TINY.kv_buckets}
    result = verify.gate_t2s(t2s_model, tiny_graphs["t2s_prefill"].path, decode, TINY)
    for n in TINY.kv_buckets:
        assert result[f"t2s_L{n}_rel_err"] < verify.T2S_MAX_REL_ERR
        assert result[f"t2s_L{n}_top1"] == 1.0


def test_t2s_gate_fp16_kv(
    t2s_model: T2SModel, tiny_t2s_kv16: dict[str, GraphSpec]
) -> None:
    """The fp16-KV graphs run with an fp16 cache, as the runtime keeps it."""
    decode = {n: tiny_t2s_kv16[f"t2s_decode_L{n}"].path for n in TINY.kv_buckets}
    result = verify.gate_t2s(t2s_model, tiny_t2s_kv16["t2s_prefill"].path, decode, TINY)
    assert all(result[f"t2s_L{n}_top1"] == 1.0 for n in TINY.kv_buckets)


def test_vits_enc_gate(
    sovits_model: SovitsModel, tiny_graphs: dict[str, GraphSpec]
) -> None:
    result = verify.gate_vits_enc(sovits_model, tiny_graphs["vits_enc"].path, TINY)
    assert result["vits_enc_rel_err"] < verify.VITS_ENC_MAX_REL_ERR
    # the stretch matrix against upstream's F.interpolate at the range's ends
    assert {"vits_enc_rel_err_speed0.6", "vits_enc_rel_err_speed1.65"} <= set(result)


def test_vits_gen_gate(
    sovits_model: SovitsModel, tiny_graphs: dict[str, GraphSpec]
) -> None:
    result = verify.gate_vits_gen(sovits_model, tiny_graphs["vits_gen"].path, TINY)
    assert result["vits_gen_snr_db"] >= verify.VITS_GEN_MIN_SNR_DB


def test_gate_failure_names_graph_metric_threshold(
    sovits_model: SovitsModel, tiny_graphs: dict[str, GraphSpec]
) -> None:
    """The graph was exported from other weights than the module it is checked
    against (e.g. a stale export): the gate must stop with a clear message."""
    other = SovitsModel(sovits_model.dims).eval()
    other.load_state_dict(sovits_model.state_dict())
    with torch.no_grad():
        other.enc_p.proj.weight.mul_(1.01)
    with pytest.raises(
        verify.GateError,
        match=r"vits_enc \(speed 1\): z rel error vs float64 .* = .* < 0\.0001",
    ):
        verify.gate_vits_enc(other, tiny_graphs["vits_enc"].path, TINY)


def test_t2s_gate_failure(
    t2s_model: T2SModel, tiny_graphs: dict[str, GraphSpec]
) -> None:
    other = T2SModel(t2s_model.dims).eval()
    other.load_state_dict(t2s_model.state_dict())
    with torch.no_grad():  # a uniform bias shift would vanish in the LayerNorm
        other.h.layers[1].linear2.weight.mul_(1.01)
    decode = {192: tiny_graphs["t2s_decode_L192"].path}
    with pytest.raises(verify.GateError, match=r"t2s_prefill\+t2s_decode_L192: logits"):
        verify.gate_t2s(other, tiny_graphs["t2s_prefill"].path, decode, TINY)


def test_metrics() -> None:
    ref = np.array([1.0, -2.0, 2.0])
    assert verify.rel_error(ref, ref) == 0.0
    assert verify.rel_error(ref, ref * 1.1) == pytest.approx(0.1)
    assert verify.snr_db(ref, ref) == float("inf")
    assert verify.snr_db(ref, ref * 1.1) == pytest.approx(20.0)


def test_gate_rejects_prompt_too_long_for_cache(
    t2s_model: T2SModel, tiny_graphs: dict[str, GraphSpec]
) -> None:
    decode = {192: Path("unused.onnx")}
    with pytest.raises(ValueError, match="exceed L=192"):
        verify.gate_t2s(
            t2s_model, tiny_graphs["t2s_prefill"].path, decode, TINY, steps=190
        )
