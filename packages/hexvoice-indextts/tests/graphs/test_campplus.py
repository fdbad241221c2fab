"""CAM++ as a masked static graph: the port equals upstream's CAMPPlus on
clips of odd lengths padded into buckets, on unfriendly weights (batch-norm
statistics and scales far from their init, two seeds); exported graphs pass
the CPU gate, a graph of other weights does not; on the simulator the fp16
graph keeps the style's direction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from indextts.s2mel.modules.campplus.DTDNN import CAMPPlus
from scripts.common.floor import rel_gate

from hexvoice_indextts.build.campplus_graph import (
    export_campplus,
    gate_cpu,
    load_campplus,
)
from hexvoice_indextts.build.gates import MAX_REL_ERR
from hexvoice_indextts.graphs.campplus import MaskedCampPlus
from hexvoice_indextts.voice.style import bucket_inputs

#: buckets small enough for a test; 208 fbank frames are 104 after the stride,
#: so the CAM layers' last 100-frame segment is partial
BUCKETS = (64, 208)


def unfriendly(seed: int) -> CAMPPlus:
    """upstream's CAMPPlus as infer_v2 builds it, its batch norms' statistics
    and affine parameters drawn far from their init."""
    torch.manual_seed(seed)
    model = CAMPPlus(feat_dim=80, embedding_size=192).eval()
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d | torch.nn.BatchNorm2d):
                m.running_mean.copy_(
                    torch.randn(m.running_mean.shape, generator=g) * 0.5
                )
                m.running_var.copy_(
                    torch.rand(m.running_var.shape, generator=g) * 3 + 0.05
                )
                if m.affine:
                    m.weight.mul_(1 + 0.5 * torch.randn(m.weight.shape, generator=g))
                    m.bias.copy_(0.3 * torch.randn(m.bias.shape, generator=g))
    return model


@pytest.fixture(scope="module", params=[0, 1])
def pair(
    request: pytest.FixtureRequest, tmp_path_factory
) -> tuple[CAMPPlus, MaskedCampPlus]:  # type: ignore[no-untyped-def]
    up = unfriendly(request.param)
    ckpt = tmp_path_factory.mktemp("campplus") / "campplus_cn_common.bin"
    torch.save(up.state_dict(), ckpt)  # upstream's file format: a plain state dict
    return up, load_campplus(ckpt)


def feats(n: int, seed: int) -> torch.Tensor:
    x = torch.randn(n, 80, generator=torch.Generator().manual_seed(seed)) * 3
    return x - x.mean(0, keepdim=True)


@pytest.mark.parametrize(
    ("n", "frames"), [(5, 8), (37, 64), (201, 208), (257, 320), (320, 320)]
)
def test_the_masked_port_is_upstream_on_the_real_frames(
    pair, n: int, frames: int
) -> None:  # type: ignore[no-untyped-def]
    up, ours = pair
    x = feats(n, n)
    inputs = {
        k: torch.from_numpy(v) for k, v in bucket_inputs(x.numpy(), frames).items()
    }
    with torch.no_grad():
        upstream = up(x[None]).numpy()
        up.double()
        exact = up(x[None].double()).numpy()
        up.float()
        got = ours(inputs["fbank"], inputs["mask"]).numpy()
        # without the mask the padding changes the style: the masking is what holds
        unmasked = ours(inputs["fbank"], torch.ones(1, frames)).numpy()
    gate = rel_gate("campplus", MAX_REL_ERR, exact, upstream, got)
    assert gate.passed, gate
    if n < frames:
        assert not rel_gate("unmasked", MAX_REL_ERR, exact, upstream, unmasked).passed


@pytest.fixture(scope="module")
def graphs(pair, tmp_path_factory):  # type: ignore[no-untyped-def]
    _, ours = pair
    out = tmp_path_factory.mktemp("graphs")
    return [export_campplus(ours, frames, out) for frames in BUCKETS]


def test_exported_graphs_pass_the_cpu_gate(pair, graphs) -> None:  # type: ignore[no-untyped-def]
    _, ours = pair
    results = gate_cpu(ours, graphs, BUCKETS)
    assert [r.name for r in results] == ["campplus_F64", "campplus_F208"]
    assert all(r.passed for r in results), [str(r) for r in results]


def test_a_graph_of_other_weights_fails_the_cpu_gate(pair, graphs) -> None:  # type: ignore[no-untyped-def]
    up, ours = pair
    other = MaskedCampPlus().eval()
    other.load_state_dict(ours.state_dict())
    with torch.no_grad():
        other.xvector.block2.tdnnd3.linear1.weight.mul_(1.01)
    results = gate_cpu(other, graphs, BUCKETS)
    assert not any(r.passed for r in results), [str(r) for r in results]


@pytest.mark.simulator
def test_the_compiled_graph_keeps_the_style_on_the_simulator(
    pair, graphs, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    spec = graphs[0]
    binary = compile_onnx(spec.path, tmp_path).bin_path
    inputs = bucket_inputs(feats(41, 7).numpy(), BUCKETS[0])
    reference = cpu_runner(spec.path).run(inputs)[0]
    sim = Simulator()
    try:
        got = sim.runner(binary).run(inputs)[0]
    finally:
        sim.close()
    (gate,) = sim_gate(spec.name, [reference], [got], rows=False)
    assert gate.passed, gate
    assert np.isfinite(got).all()
