"""w2v-BERT as a masked static graph: the port equals transformers'
Wav2Vec2BertModel (the class upstream loads) on clips of odd and even frame
counts padded into buckets, on small odd-width models of two seeds and on the
tiny IndexTTS-2's real-width 17-layer one; exported graphs pass the CPU gate, a
graph of other weights does not; the simulator keeps the hidden states."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from scripts.common.floor import rel_gate
from transformers import Wav2Vec2BertConfig, Wav2Vec2BertModel

from hexvoice_indextts.build.gates import MAX_REL_ERR
from hexvoice_indextts.build.w2v_bert_graph import (
    export_w2v_bert,
    gate_cpu,
    load_w2v_bert,
    reference_hidden,
    samples_for,
)
from hexvoice_indextts.graphs.w2v_bert import StaticW2vBert
from hexvoice_indextts.voice.semantic import bucket_inputs, w2v_features

#: head width 17, a relative-key window of 5 left and 3 right, kernel 7
SMALL = dict(
    hidden_size=68,
    num_attention_heads=4,
    num_hidden_layers=3,
    intermediate_size=37,
    left_max_position_embeddings=5,
    right_max_position_embeddings=3,
    conv_depthwise_kernel_size=7,
)
BUCKETS = (16, 40)


def save(root: Path, config: Wav2Vec2BertConfig, seed: int) -> tuple[Path, Path]:
    """A hub snapshot and a wav2vec2bert_stats.pt, as upstream's files are."""
    torch.manual_seed(seed)
    Wav2Vec2BertModel(config).eval().save_pretrained(root / "snapshot")
    g = torch.Generator().manual_seed(seed + 1)
    stats = {
        "mean": torch.randn(config.hidden_size, generator=g) * 0.3,
        "var": torch.rand(config.hidden_size, generator=g) * 2 + 0.1,
    }
    torch.save(stats, root / "wav2vec2bert_stats.pt")
    return root / "snapshot", root / "wav2vec2bert_stats.pt"


@pytest.fixture(scope="module", params=[0, 1])
def small(
    request: pytest.FixtureRequest, tmp_path_factory: Any
) -> tuple[Any, StaticW2vBert]:
    root = tmp_path_factory.mktemp("w2v")
    snapshot, stats = save(root, Wav2Vec2BertConfig(**SMALL), request.param)
    return load_w2v_bert(snapshot, stats, layer=SMALL["num_hidden_layers"])


def compare(
    model: Any, port: StaticW2vBert, frames: int, rows: int, mask: bool = True
) -> Any:
    audio = 0.3 * np.random.default_rng(frames).standard_normal(samples_for(frames))
    f, m = w2v_features(audio.clip(-1, 1).astype(np.float32))
    inputs = {k: torch.from_numpy(v) for k, v in bucket_inputs(f, m, rows).items()}
    if not mask:
        inputs["mask"] = torch.ones_like(inputs["mask"])

    with torch.no_grad():
        upstream = reference_hidden(model, port, f, m)
        got = port(inputs["features"], inputs["mask"]).numpy()[:, : len(f)]
        model.double(), port.double()
        exact = reference_hidden(model, port, f, m)
        model.float(), port.float()
    return rel_gate("w2v_bert", MAX_REL_ERR, exact, upstream, got)


@pytest.mark.parametrize(
    ("frames", "rows"), [(8, 16), (31, 16), (32, 16), (57, 40), (80, 40)]
)
def test_the_masked_port_is_transformers_model(
    small: Any, frames: int, rows: int
) -> None:
    gate = compare(*small, frames, rows)
    assert gate.passed, gate


def test_without_the_mask_the_padding_shows(small: Any) -> None:
    assert not compare(*small, 31, 40, mask=False).passed


def test_the_real_width_17_layer_model_of_the_tiny_indextts(tmp_path: Path) -> None:
    # w2v-bert-2.0's own config but for depth and feed-forward (as write_tiny)
    config = Wav2Vec2BertConfig(num_hidden_layers=17, intermediate_size=37)
    gate = compare(*load_w2v_bert(*save(tmp_path, config, 3)), 101, 64)
    assert gate.passed, gate


@pytest.fixture(scope="module")
def graphs(small: Any, tmp_path_factory: Any) -> list[Any]:
    out = tmp_path_factory.mktemp("graphs")
    return [export_w2v_bert(small[1], rows, out) for rows in BUCKETS]


def test_exported_graphs_pass_the_cpu_gate(small: Any, graphs: list[Any]) -> None:
    results = gate_cpu(*small, graphs, BUCKETS)
    assert [r.name for r in results] == ["w2v_bert_R16", "w2v_bert_R40"]
    assert all(r.passed for r in results), [str(r) for r in results]


def test_a_graph_of_other_weights_fails_the_cpu_gate(
    small: Any, graphs: list[Any]
) -> None:
    model, port = small
    other = copy.deepcopy(model)
    other_port = StaticW2vBert(other, len(port.layers), port.mean, port.std).eval()
    with (
        torch.no_grad()
    ):  # (a uniform scale of the depthwise conv would vanish in its norm)
        other.encoder.layers[1].conv_module.pointwise_conv2.weight.mul_(1.01)
    results = gate_cpu(other, other_port, graphs, BUCKETS)
    assert not any(r.passed for r in results), [str(r) for r in results]


def test_refusals() -> None:
    rotary = Wav2Vec2BertModel(
        Wav2Vec2BertConfig(**{**SMALL, "position_embeddings_type": "rotary"})
    )
    one = torch.ones(SMALL["hidden_size"])
    with pytest.raises(
        ValueError,
        match="position_embeddings_type 'rotary', the port takes 'relative_key'",
    ):
        StaticW2vBert(rotary, 3, one, one)
    with pytest.raises(ValueError, match="hidden layer 17 of a 3-layer model"):
        StaticW2vBert(Wav2Vec2BertModel(Wav2Vec2BertConfig(**SMALL)), 17, one, one)
    with pytest.raises(ValueError, match="1 fbank frame\\(s\\), w2v-BERT needs 2"):
        w2v_features(np.zeros(samples_for(1), np.float32))


@pytest.mark.simulator
def test_the_compiled_graph_keeps_the_hidden_states_on_the_simulator(
    graphs: list[Any], tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    spec = graphs[0]
    audio = 0.3 * np.random.default_rng(5).standard_normal(samples_for(27))
    f, m = w2v_features(audio.clip(-1, 1).astype(np.float32))
    inputs = bucket_inputs(f, m, 16)
    reference = cpu_runner(spec.path).run(inputs)[0][:, : len(f)]
    sim = Simulator()
    try:
        got = sim.runner(compile_onnx(spec.path, tmp_path).bin_path).run(inputs)[0][
            :, : len(f)
        ]
    finally:
        sim.close()
    (gate,) = sim_gate(spec.name, [reference], [got], rows=False)
    assert gate.passed, gate
