"""The style graphs' gates: a wrong graph fails by name; the simulator gate."""

from __future__ import annotations

import pytest

from scripts.gptsovits.export.reference import export_reference
from scripts.gptsovits.shapes import ReferenceShapes
from scripts.gptsovits.synthetic.sv import random_sv
from scripts.gptsovits.verify import reference as gates
from scripts.gptsovits.verify.cpu import GateError

#: the simulator needs ~54 s per tiny sv call at 998 frames: gate a 1.5 s probe
#: (75 spectrogram / 148 fbank frames) in small windows that still pad it
SMALL = ReferenceShapes(hubert_samples=1, spec_frames=80, fbank_frames=160)
PROBE_SECONDS = 1.5


@pytest.fixture(scope="module")
def graphs(sovits_model, tmp_path_factory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("ref_gate")
    sv = random_sv(0)
    ref_spec, sv_spec = export_reference(sovits_model, sv, SMALL, out)
    rp = gates.reference_params(sovits_model, SMALL.spec_frames, SMALL.fbank_frames)
    return sv, ref_spec.path, sv_spec.path, rp


def test_another_sv_model_fails_the_cpu_gate(graphs, sovits_model) -> None:  # type: ignore[no-untyped-def]
    _, ref_onnx, sv_onnx, rp = graphs
    with pytest.raises(
        GateError,
        match=r"sv: rel error vs float64 \(CPU fp32\) = .* fails the gate < 0\.0001",
    ):
        gates.gate_reference_cpu(
            sovits_model, random_sv(1), ref_onnx, sv_onnx, rp, PROBE_SECONDS
        )


def test_probe_is_voice_like_and_deterministic() -> None:
    a, b = gates.probe_clip(), gates.probe_clip()
    assert a.shape == (96000,) and (a == b).all() and 0.1 < abs(a).max() <= 1.0


@pytest.mark.slow
@pytest.mark.simulator
def test_simulator_gates(graphs, qnn_cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from scripts.common.build.runners import Simulator
    from scripts.common.qnn_compile import compile_onnx

    _, ref_onnx, sv_onnx, rp = graphs
    bins = {
        key: compile_onnx(path, tmp_path, cache_dir=qnn_cache).bin_path
        for key, path in (("ref_enc", ref_onnx), ("sv", sv_onnx))
    }
    sim = Simulator()
    try:
        results = gates.gate_reference_sim(
            sim, bins, ref_onnx, sv_onnx, rp, PROBE_SECONDS
        )
    finally:
        sim.close()
    assert set(results) == {"sv emb", "ref_enc ge", "ref_enc ge512"}
    assert min(r.value for r in results.values()) >= 0.999
