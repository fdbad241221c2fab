"""The semantic codec's encoder as a masked static graph, its codes picked on
the CPU: equal to upstream's RepCodec.quantize (codes and S_ref) on rows of
odd counts padded into buckets, for the tiny config and an odd one, on
weights drawn far from their init; exported graphs pass the CPU gate, a graph
of other weights does not; the simulator keeps the codes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.torch
import torch
from indextts.utils.maskgct_utils import build_semantic_codec
from omegaconf import OmegaConf

from hexvoice_indextts.build.semantic_codec_graph import (
    CHECKPOINT,
    export_semantic_codec,
    gate_cpu,
    load_semantic_codec,
)
from hexvoice_indextts.model_dir.config import SemanticCodec
from hexvoice_indextts.tiny.model import tiny_config

#: the tiny model's codec, and one with two ConvNeXt layers and other widths
CONFIGS = [
    tiny_config()["semantic_codec"],
    {**tiny_config()["semantic_codec"], "codebook_size": 97, "codebook_dim": 7,
     "vocos_dim": 18, "vocos_num_layers": 2},
]  # fmt: skip
WIDTH = 1024
BUCKETS = (8, 24)


@pytest.fixture(scope="module", params=[0, 1])
def codec(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Any:
    cfg = CONFIGS[request.param]
    torch.manual_seed(request.param)
    up = build_semantic_codec(OmegaConf.create(cfg))
    with torch.no_grad():  # far from trunc_normal(0.02) and zero biases
        for p in up.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    snapshot = tmp_path_factory.mktemp("maskgct")
    (snapshot / CHECKPOINT).parent.mkdir(parents=True)
    safetensors.torch.save_model(up, str(snapshot / CHECKPOINT))  # as upstream's file
    port, tables = load_semantic_codec(snapshot, SemanticCodec(**cfg))
    return up, port, tables


@pytest.mark.parametrize(("n", "rows"), [(3, 8), (8, 8), (13, 24), (24, 24)])
def test_codes_and_embeddings_are_upstreams(codec: Any, n: int, rows: int) -> None:
    up, port, tables = codec
    x = torch.randn(1, n, WIDTH, generator=torch.Generator().manual_seed(n))
    with torch.no_grad():
        codes, s_ref = up.quantize(x)
        padded = torch.zeros(1, rows, WIDTH)
        padded[0, :n] = x[0]
        mask = (torch.arange(rows) < n).float()[None]
        latents = port(padded, mask)[0, :n].numpy()
    ours = tables.codes(latents)
    assert ours.tolist() == codes[0].tolist()
    emb = tables.embed(ours)
    assert np.abs(emb - s_ref[0].numpy()).max() <= 1e-5 * np.abs(s_ref.numpy()).max()
    if n < rows:  # without the mask, rows past the clip reach it
        unmasked = port(padded, torch.ones(1, rows))[0, :n].detach().numpy()
        assert np.abs(unmasked - latents).max() > 1e-3


@pytest.fixture(scope="module")
def graphs(codec: Any, tmp_path_factory: Any) -> list[Any]:
    out = tmp_path_factory.mktemp("graphs")
    return [export_semantic_codec(codec[1], rows, WIDTH, out) for rows in BUCKETS]


def test_exported_graphs_pass_the_cpu_gate(codec: Any, graphs: list[Any]) -> None:
    _, port, tables = codec
    results = gate_cpu(port, tables, graphs, BUCKETS, WIDTH)
    assert len(results) == 4 and all(r.passed for r in results), [
        str(r) for r in results
    ]


def test_a_graph_of_other_weights_fails_the_cpu_gate(
    codec: Any, graphs: list[Any]
) -> None:
    _, port, tables = codec
    other = copy.deepcopy(port)
    with torch.no_grad():
        other.encoder__0__embed__weight.mul_(1.01)
    results = gate_cpu(other, tables, graphs, BUCKETS, WIDTH)
    latents = [r for r in results if "rel error" in r.metric]
    assert latents and not any(r.passed for r in latents), [str(r) for r in results]


@pytest.mark.simulator
def test_the_compiled_graph_keeps_the_codes_on_the_simulator(
    codec: Any, graphs: list[Any], tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    _, _, tables = codec
    spec, n = graphs[1], 19
    hidden = np.zeros((1, BUCKETS[1], WIDTH), np.float32)
    hidden[0, :n] = np.random.default_rng(3).standard_normal((n, WIDTH))
    inputs = {
        "hidden": hidden,
        "mask": (np.arange(BUCKETS[1]) < n)[None].astype(np.float32),
    }
    reference = cpu_runner(spec.path).run(inputs)[0][0, :n]
    sim = Simulator()
    try:
        got = sim.runner(compile_onnx(spec.path, tmp_path).bin_path).run(inputs)[0][
            0, :n
        ]
    finally:
        sim.close()
    # the codes' scores as logits: the least cosine, and top-1 up to fp16 ties
    gates = sim_gate(spec.name, [tables.scores(reference)], [tables.scores(got)])
    assert all(g.passed for g in gates), [str(g) for g in gates]
