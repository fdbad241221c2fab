"""s2mel's length regulator as a masked static graph: equal to upstream's
InterpolateRegulator (its nearest interpolation and its group norm over all
frames) on frame counts padded into buckets, for the tiny config and one of
two blocks and odd channels, weights far from init; the nearest rows are
torch's for every size pair; exported graphs pass the CPU gate, a graph of
other weights does not; refusals of what the port does not take."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from indextts.s2mel.modules.length_regulator import InterpolateRegulator
from scripts.common.floor import rel_gate

from hexvoice_indextts.build.gates import MAX_REL_ERR
from hexvoice_indextts.build.length_regulator_graph import (
    export_length_regulator,
    gate_cpu,
    load_length_regulator,
)
from hexvoice_indextts.graphs.length_regulator import MaskedLengthRegulator
from hexvoice_indextts.model_dir.config import LengthRegulator
from hexvoice_indextts.tiny.model import tiny_config
from hexvoice_indextts.voice.frames import nearest_rows, regulator_inputs

TINY = tiny_config()["s2mel"]["length_regulator"]
CONFIGS = [TINY, {**TINY, "channels": 19, "sampling_ratios": [1, 1]}]
BUCKETS = (16, 48)
#: weights drawn this far from their init (std). 0.2 also holds the CPU
#: gates, but the simulator's fp16 then keeps a cosine of only 0.993 on the
#: tiny config (torch's own fp16 on the CPU: 0.55; 0.9999 at init): fp16 on
#: such weights, not the graph
NOISE = 0.1


def upstream(cfg: dict[str, Any], seed: int) -> InterpolateRegulator:
    """As s2mel's MyModel builds it (commons.py), weights far from init."""
    torch.manual_seed(seed)
    model = InterpolateRegulator(
        channels=cfg["channels"],
        sampling_ratios=cfg["sampling_ratios"],
        is_discrete=cfg["is_discrete"],
        in_channels=cfg["in_channels"],
        vector_quantize=cfg["vector_quantize"],
        codebook_size=cfg["content_codebook_size"],
        n_codebooks=cfg["n_codebooks"],
        quantizer_dropout=cfg["quantizer_dropout"],
        f0_condition=cfg["f0_condition"],
        n_f0_bins=cfg["n_f0_bins"],
    ).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * NOISE)
    return model


@pytest.fixture(scope="module", params=[0, 1])
def pair(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Any:
    cfg = CONFIGS[request.param]
    up = upstream(cfg, request.param)
    ckpt = tmp_path_factory.mktemp("s2mel") / "s2mel.pth"
    torch.save(
        {"net": {"length_regulator": up.state_dict()}}, ckpt
    )  # upstream's layout
    return up, load_length_regulator(ckpt, LengthRegulator(**cfg))


def test_nearest_rows_are_torchs() -> None:
    for rows in range(1, 120):
        for frames in {*range(1, 300, 11), rows, 2 * rows, int(rows * 1.72)} - {0}:
            x = torch.arange(rows, dtype=torch.float32)[None, None]
            want = F.interpolate(x, size=frames, mode="nearest")[0, 0].long().numpy()
            assert (nearest_rows(rows, frames) == want).all(), (rows, frames)


@pytest.mark.parametrize(
    ("n", "frames", "bucket"), [(1, 3, 16), (7, 12, 16), (27, 47, 48), (30, 48, 48)]
)
def test_the_masked_port_is_upstreams(
    pair: Any, n: int, frames: int, bucket: int
) -> None:
    up, port = pair
    s = torch.randn(
        1, n, TINY["in_channels"], generator=torch.Generator().manual_seed(n)
    )
    ylens = torch.LongTensor([frames])
    inputs = {
        k: torch.from_numpy(v)
        for k, v in regulator_inputs(s[0].numpy(), frames, bucket).items()
    }
    with torch.no_grad():
        ref = up(s, ylens=ylens, n_quantizers=3, f0=None)[0].numpy()
        up.double()
        exact = up(s.double(), ylens=ylens, n_quantizers=3, f0=None)[0].numpy()
        up.float()
        got = port(inputs["rows"], inputs["mask"])[:, :frames].numpy()
        unmasked = port(inputs["rows"], torch.ones(1, bucket))[:, :frames].numpy()
    gate = rel_gate("length_regulator", MAX_REL_ERR, exact, ref, got)
    assert gate.passed, gate
    if frames < bucket:  # the group norm over padded frames moves every frame
        assert not rel_gate("unmasked", MAX_REL_ERR, exact, ref, unmasked).passed


@pytest.fixture(scope="module")
def graphs(pair: Any, tmp_path_factory: Any) -> list[Any]:
    out = tmp_path_factory.mktemp("graphs")
    return [export_length_regulator(pair[1], b, out) for b in BUCKETS]


def test_exported_graphs_pass_the_cpu_gate(pair: Any, graphs: list[Any]) -> None:
    results = gate_cpu(pair[1], graphs, BUCKETS)
    assert [r.name for r in results] == ["length_regulator_F16", "length_regulator_F48"]
    assert all(r.passed for r in results), [str(r) for r in results]


def test_a_graph_of_other_weights_fails_the_cpu_gate(
    pair: Any, graphs: list[Any]
) -> None:
    other = copy.deepcopy(pair[1])
    with torch.no_grad():
        other.convs[0].weight.mul_(1.01)
        other.convs[0].bias.add_(0.1)
    results = gate_cpu(other, graphs, BUCKETS)
    assert not any(r.passed for r in results), [str(r) for r in results]


def test_refusals(tmp_path: Path) -> None:
    state = upstream(TINY, 0).state_dict()
    with pytest.raises(
        ValueError, match="the port takes IndexTTS-2's continuous input"
    ):
        MaskedLengthRegulator(state, LengthRegulator(**{**TINY, "f0_condition": True}))
    with pytest.raises(ValueError, match="do not fit a bucket of 16"):
        regulator_inputs(np.zeros((3, 4), np.float32), 17, 16)


@pytest.mark.simulator
def test_the_compiled_graph_keeps_the_condition_on_the_simulator(
    graphs: list[Any], tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    spec, frames = graphs[1], 37
    rows = np.random.default_rng(4).standard_normal((21, TINY["in_channels"]))
    inputs = regulator_inputs(rows.astype(np.float32), frames, BUCKETS[1])
    reference = cpu_runner(spec.path).run(inputs)[0][:, :frames]
    sim = Simulator()
    try:
        binary = compile_onnx(spec.path, tmp_path).bin_path
        got = sim.runner(binary).run(inputs)[0][:, :frames]
    finally:
        sim.close()
    (gate,) = sim_gate(spec.name, [reference], [got], rows=False)
    assert gate.passed, gate
