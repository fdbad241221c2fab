"""bert / g2pw graphs: structure of the split, in-graph clipping, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from daemon.engines.gptsovits.frontend import CharVocab, G2pwTables
from daemon.engines.gptsovits.frontend.zh.g2pw import BODY_INPUTS
from scripts.common.build.onnx_export import graph_spec
from scripts.gptsovits.export.bert import (
    bert_inputs,
    export_bert,
    graph_layers,
    load_bert,
)
from scripts.gptsovits.export.g2pw import SurgeryError, find_cut, split_g2pw
from scripts.gptsovits.shapes import TINY
from scripts.gptsovits.synthetic.voice import SyntheticVoice
from scripts.gptsovits.verify.cpu import cpu_session
from scripts.gptsovits.verify.text import g2pw_resolver, gate_bert, gate_g2pw


@pytest.fixture(scope="module")
def g2pw_split(
    synthetic_voice: SyntheticVoice, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("g2pw")
    split_g2pw(
        synthetic_voice.g2pw_dir / "g2pW.onnx",
        out / "g2pw.onnx",
        out / "cpu",
        TINY.g2pw_rows,
        TINY.g2pw_tokens,
        "g2pw_",
    )
    return out / "g2pw.onnx", out / "cpu"


def test_g2pw_body_is_static_int32(g2pw_split: tuple[Path, Path]) -> None:
    spec = graph_spec("g2pw", g2pw_split[0])
    rows, tokens = TINY.g2pw_rows, TINY.g2pw_tokens
    assert [(t.name, t.dtype, t.shape) for t in spec.inputs] == [
        (name, "int32", (rows,) if name == "position_ids" else (rows, tokens))
        for name in BODY_INPUTS
    ]
    assert spec.outputs[0].name == "hidden" and spec.outputs[0].shape[0] == rows
    ops = {n.op_type for n in onnx.load(str(g2pw_split[0])).graph.node}
    assert "ArgMax" not in ops and "Shape" not in ops


def test_g2pw_split_matches_the_original(
    synthetic_voice: SyntheticVoice, g2pw_split: tuple[Path, Path]
) -> None:
    vocab = CharVocab(synthetic_voice.bert_dir / "vocab.txt")
    resolver = g2pw_resolver(
        synthetic_voice.g2pw_dir, vocab, g2pw_split[1], g2pw_split[0]
    )
    assert (
        resolver.head.char_desc.shape
        == G2pwTables.from_dir(synthetic_voice.g2pw_dir).label_mask.shape
    )
    result = gate_g2pw(synthetic_voice.g2pw_dir / "g2pW.onnx", resolver)
    assert result["g2pw_agreement"] == 1.0 and result["g2pw_queries"] >= 8


def test_g2pw_out_of_range_indices_are_clipped(g2pw_split: tuple[Path, Path]) -> None:
    run = cpu_session(g2pw_split[0])
    rows, tokens = TINY.g2pw_rows, TINY.g2pw_tokens
    ids = np.full((rows, tokens), 7, np.int32)
    feeds = {
        "input_ids": ids,
        "token_type_ids": np.zeros_like(ids),
        "attention_mask": np.ones_like(ids),
        "position_ids": np.full(rows, 3, np.int32),
    }
    wild = dict(feeds, position_ids=np.full(rows, 10**6, np.int32))
    wild["input_ids"] = ids.copy()
    wild["input_ids"][:, 5] = -(10**6)
    clipped = dict(feeds, position_ids=np.full(rows, tokens - 1, np.int32))
    clipped["input_ids"] = ids.copy()
    clipped["input_ids"][:, 5] = 0
    np.testing.assert_array_equal(run(wild)[0], run(clipped)[0])


def test_g2pw_surgery_rejects_a_model_without_head(tmp_path: Path) -> None:
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3])],
    )
    with pytest.raises(SurgeryError, match="one ArgMax"):
        find_cut(onnx.helper.make_model(graph))


def test_bert_graph_clips_ids_and_matches_hf(
    synthetic_voice: SyntheticVoice, tmp_path: Path
) -> None:
    bert = load_bert(synthetic_voice.bert_dir)
    t = TINY.bert_tokens
    path = tmp_path / "bert.onnx"
    export_bert(bert, t, graph_layers(bert), path)
    vocab = CharVocab(synthetic_voice.bert_dir / "vocab.txt")
    assert gate_bert(bert, path, vocab, t)["bert_rel_err"] < 1e-4
    run = cpu_session(path)
    n = bert.config.vocab_size
    wild, tame = bert_inputs([2, 10**7, 5, 3], t), bert_inputs([2, n - 1, 5, 3], t)
    np.testing.assert_array_equal(run(wild)[0], run(tame)[0])
    with pytest.raises(ValueError, match="exceed the graph's"):
        bert_inputs(list(range(t + 1)), t)


def test_missing_bert_dir_is_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no config.json"):
        load_bert(tmp_path)
