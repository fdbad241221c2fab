"""Simulator-gate metrics and failure messages."""

from __future__ import annotations

import numpy as np
import pytest

from scripts.gptsovits.verify import sim as sim_verify
from scripts.gptsovits.verify.cpu import GateError


def test_topk_agreement() -> None:
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4, 100))
    assert sim_verify.topk_agreement(ref + 1e-6, ref) == 1.0
    swapped = ref.copy()
    order = np.argsort(ref[0])
    swapped[0, order[-1]] = ref[0, order[0]] - 1.0  # the best drops out of the top
    assert sim_verify.topk_agreement(swapped, ref) == 0.75


def test_topk_agreement_allows_ties_at_fp16_precision_only() -> None:
    """The test voice's case: the 15th and 16th logits 3.9e-5 apart, swapped by
    fp16 noise, is a tie; a swap across a real gap is not."""
    ref = np.linspace(-1.0, 1.0, 100)
    order = np.argsort(ref)
    k15, k16 = order[-15], order[-16]
    near = ref.copy()
    near[k16] = ref[k15] - 3.9e-5
    flipped = near.copy()
    flipped[k15], flipped[k16] = near[k16], near[k15]  # fp16-sized swap
    assert sim_verify.topk_agreement(flipped[None], near[None]) == 1.0
    far = ref.copy()
    far[k15], far[k16] = ref[k16], ref[k15]  # 0.02 apart: a real disagreement
    assert sim_verify.topk_agreement(far[None], ref[None]) == 0.0


def test_cosine() -> None:
    a = np.array([1.0, 2.0, 3.0])
    assert sim_verify.cosine(a, 2 * a) == pytest.approx(1.0)
    assert sim_verify.cosine(a, -a) == pytest.approx(-1.0)


def test_failed_gate_names_graph_metric_threshold() -> None:
    a = np.ones(8, np.float32)
    with pytest.raises(
        GateError, match=r"bert: simulator cosine = -1 fails the gate >= 0\.999"
    ):
        sim_verify._cosine_gate("bert", -a, a, [])


@pytest.fixture(scope="module")
def t2s_bins(tiny_t2s_kv16, qnn_cache, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The tiny fp16-KV T2S graphs compiled for the simulator (cached)."""
    from scripts.common.qnn_compile import compile_onnx

    out = tmp_path_factory.mktemp("t2s_bins")
    return {
        name: compile_onnx(spec.path, out, cache_dir=qnn_cache).bin_path
        for name, spec in tiny_t2s_kv16.items()
    }


def _ref(model, n_phones: int = 12, n_prompt: int = 20):  # type: ignore[no-untyped-def]
    from scripts.gptsovits.export.ref_features import RefFeatures

    d, rng = model.dims, np.random.default_rng(3)
    return RefFeatures(
        "random",
        "",
        "zh",
        rng.integers(0, d.phone_vocab, n_phones),
        rng.standard_normal((n_phones, d.bert_dim)).astype(np.float32),
        rng.integers(0, d.eos, n_prompt),
        np.zeros((1, 1)),
        np.zeros((1, 1)),
        0.0,
        None,
    )


@pytest.mark.slow
@pytest.mark.simulator
def test_t2s_gate_runs_the_engine_driver_on_the_simulator(t2s_model, t2s_bins) -> None:  # type: ignore[no-untyped-def]
    """Teacher-forced steps per bucket through T2S on qnnrt, and a model the
    binaries were not compiled from fails the gate."""
    import torch

    from scripts.gptsovits.models.t2s import T2SModel
    from scripts.gptsovits.shapes import TINY

    decode = {n: t2s_bins[f"t2s_decode_L{n}"] for n in TINY.kv_buckets}
    sim = sim_verify.open_simulator()
    try:
        res = sim_verify.gate_t2s(
            sim, t2s_model, t2s_bins["t2s_prefill"], decode, TINY, _ref(t2s_model)
        )
        assert set(res) == {"t2s_prefill", *(f"t2s_decode_{n}" for n in decode)}
        for key, r in res.items():
            assert r.value >= sim_verify.SIM_T2S_MIN_TOPK_AGREEMENT, key
            assert r.seconds, key
        assert len(res["t2s_decode_192"].seconds) == sim_verify.SIM_T2S_STEPS
        other = T2SModel(t2s_model.dims).eval()
        other.load_state_dict(t2s_model.state_dict())
        with torch.no_grad():
            other.ar_predict_layer.weight.mul_(-1.0)
        with pytest.raises(GateError, match=r"t2s_prefill\+t2s_decode_192: simulator"):
            sim_verify.gate_t2s(
                sim, other, t2s_bins["t2s_prefill"], decode, TINY, _ref(t2s_model)
            )
    finally:
        sim.close()
