"""The build's simulator gate on the tiny bundle's compiled graphs (a GPT
decode step with its logits' top-1, a DiT velocity with its gather index,
CAM++): each within the gate; a failed gate stops the build naming graph,
metric and bound."""

from __future__ import annotations

from typing import Any

import pytest
from scripts.common.gate_result import GateResult

from hexvoice_indextts.engine.params import LICENSE
from hexvoice_indextts.model_dir import read_model_dir
from hexvoice_indextts.pipeline.context import BuildContext
from hexvoice_indextts.pipeline.gates import GateError, _checked, sim_gates


@pytest.mark.simulator
def test_compiled_graphs_pass_the_simulator_gate(bundle: Any) -> None:
    pytest.importorskip("onnxruntime_qnn")
    o = bundle.options
    ctx = BuildContext(o, read_model_dir(o.model), LICENSE.id)
    gates = sim_gates(ctx, ["gpt_decode_L96", "dit_F96", "campplus_F96"])
    assert len(gates.rows) == 4  # cosine for each, top-1 for the logits
    assert any("top-1" in r for r in gates.rows)


def test_a_failed_gate_names_graph_metric_and_bound() -> None:
    ok = GateResult("dit_F96", "simulator cosine (min)", 0.9999, 0.999, True)
    bad = GateResult("w2v_bert_R48", "simulator cosine (min)", 0.99, 0.995, True)
    assert _checked([ok]).rows == (str(ok),)
    with pytest.raises(
        GateError,
        match=r"w2v_bert_R48: simulator cosine \(min\) 0.99 \(>= 0.995\) FAIL",
    ):
        _checked([ok, bad])
