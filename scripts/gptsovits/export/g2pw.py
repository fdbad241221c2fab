"""Split a g2pW ONNX model: BERT body → static NPU graph, output head → fp32 tables.

g2pW.onnx (inputs input_ids, token_type_ids, attention_mask, phoneme_mask,
char_ids, position_ids; output probabilities) ends in a small head on the hidden
state of the queried char: a POS classifier whose argmax picks a row of the
second-order descriptor table, descriptor tables, a phoneme classifier and a
weighted softmax. The head must stay fp32 (docs/board.md, port pitfalls, 6), so it is
cut off here and written as numpy tables for ``frontend.g2pw.G2pwHead``.

The cut point is found from the graph's structure, not from tensor names: the
only ArgMax is the POS argmax; the linear layer feeding it reads the body output
``hidden``; the other linear layer reading ``hidden`` is the classifier; the
gathers from constant tables as wide as the classifier are the descriptors.

The body is then made static (rows x tokens), its int64 index inputs become
int32 clipped in-graph (an out-of-range Gather index crashed the DSP in the
reference port) and every remaining int64 tensor is narrowed to int32 (the HTP
has no int64 arithmetic).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

from daemon.engines.gptsovits.frontend.zh.g2pw import BODY_INPUTS, HEAD_FILES
from scripts.common.build.onnx_export import OPSET, fold_static
from scripts.gptsovits.export.onnx_int32 import narrow_int64

log = logging.getLogger(__name__)

HIDDEN = "hidden"


class SurgeryError(ValueError):
    """The model does not have the structure of a g2pW export."""


@dataclass(frozen=True)
class HeadTables:
    pos_w: np.ndarray
    pos_b: np.ndarray
    cls_w: np.ndarray
    cls_b: np.ndarray
    desc_bias: np.ndarray
    char_desc: np.ndarray
    second_order: np.ndarray

    def save(self, directory: Path, prefix: str) -> list[Path]:
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in HEAD_FILES:
            path = directory / f"{prefix}{name}.npy"
            np.save(path, np.ascontiguousarray(getattr(self, name), np.float32))
            paths.append(path)
        return paths


@dataclass(frozen=True)
class _Cut:
    hidden: str
    head: HeadTables
    vocab: int  # rows of the word-embedding table
    type_vocab: int


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    out = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute[0].name == "value":
            out[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    return out


def _linear(
    node: onnx.NodeProto, consts: dict[str, np.ndarray], producers: dict
) -> tuple[str, np.ndarray, np.ndarray] | None:
    """(input, weight [out, in], bias [out]) of a Gemm or MatMul(+Add) layer."""
    if node.op_type == "Gemm":
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("transA", 0) or len(node.input) < 3:
            return None
        w, b = consts.get(node.input[1]), consts.get(node.input[2])
        if w is None or b is None:
            return None
        w = w if attrs.get("transB", 0) else w.T
        return node.input[0], w * attrs.get("alpha", 1.0), b * attrs.get("beta", 1.0)
    if node.op_type == "Add":
        for i in (0, 1):
            mm, b = producers.get(node.input[i]), consts.get(node.input[1 - i])
            if mm is not None and mm.op_type == "MatMul" and b is not None:
                w = consts.get(mm.input[1])
                if w is not None:
                    return mm.input[0], w.T, b
    return None


def find_cut(model: onnx.ModelProto) -> _Cut:
    graph = model.graph
    consts = _constants(graph)
    producers = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    argmax = [n for n in graph.node if n.op_type == "ArgMax"]
    if len(argmax) != 1:
        raise SurgeryError(
            f"expected exactly one ArgMax (the POS classifier), found {len(argmax)}"
        )
    pos_node = producers.get(argmax[0].input[0])
    pos = pos_node and _linear(pos_node, consts, producers)
    if not pos:
        raise SurgeryError("the POS ArgMax does not read a linear layer")
    hidden, pos_w, pos_b = pos
    classifiers = []
    for n in consumers.get(hidden, []):
        if n is pos_node:
            continue
        cand = n if n.op_type == "Gemm" else None
        if n.op_type == "MatMul":
            cand = next((c for c in consumers.get(n.output[0], [])), None)
        found = cand is not None and _linear(cand, consts, producers)
        if found and found[0] == hidden:
            classifiers.append(found)
    if len(classifiers) != 1:
        raise SurgeryError(
            f"expected one phoneme classifier reading {hidden!r}, "
            f"found {len(classifiers)}"
        )
    _, cls_w, cls_b = classifiers[0]
    n_labels = cls_w.shape[0]
    tables = sorted(
        (
            consts[n.input[0]]
            for n in graph.node
            if n.op_type == "Gather"
            and n.input[0] in consts
            and consts[n.input[0]].ndim == 2
            and consts[n.input[0]].shape[1] == n_labels
        ),
        key=len,
    )
    if len(tables) != 3 or len(tables[0]) != 1:
        raise SurgeryError(
            f"expected descriptor tables [1|C|C*P, {n_labels}], found "
            f"{[t.shape for t in tables]}"
        )
    bias, char_desc, second = tables
    n_pos = pos_w.shape[0]
    if len(second) != len(char_desc) * n_pos:
        raise SurgeryError(
            f"second-order table has {len(second)} rows, expected "
            f"{len(char_desc)} chars x {n_pos} POS tags"
        )
    emb = {}
    for name in ("input_ids", "token_type_ids"):
        rows = [
            consts[n.input[0]].shape[0]
            for n in consumers.get(name, [])
            if n.op_type == "Gather" and n.input[0] in consts
        ]
        if len(rows) != 1:
            raise SurgeryError(f"{name} does not feed exactly one embedding table")
        emb[name] = rows[0]
    head = HeadTables(pos_w, pos_b, cls_w, cls_b, bias, char_desc, second)
    return _Cut(hidden, head, emb["input_ids"], emb["token_type_ids"])


def _body(model: onnx.ModelProto, cut: _Cut, rows: int, tokens: int) -> onnx.ModelProto:
    if cut.hidden not in {v.name for v in model.graph.value_info}:
        # the extractor wants a value_info for every new output
        model.graph.value_info.append(
            helper.make_tensor_value_info(cut.hidden, TensorProto.FLOAT, None)
        )
    body = onnx.utils.Extractor(model).extract_model(list(BODY_INPUTS), [cut.hidden])
    # the builds' opset: the int32 Clip below needs 12 or later
    body = version_converter.convert_version(body, OPSET)
    graph = body.graph
    limits = {
        "input_ids": cut.vocab - 1,
        "token_type_ids": cut.type_vocab - 1,
        "attention_mask": 1,
        "position_ids": tokens - 1,
    }
    new_inputs, new_nodes = [], []
    for value in graph.input:
        shape = [rows] if value.name == "position_ids" else [rows, tokens]
        new_inputs.append(
            helper.make_tensor_value_info(value.name, TensorProto.INT32, shape)
        )
        inner = f"{value.name}__i64"
        for node in graph.node:
            for i, name in enumerate(node.input):
                if name == value.name:
                    node.input[i] = inner
        lo, hi = f"{value.name}__lo", f"{value.name}__hi"
        graph.initializer.extend(
            [
                numpy_helper.from_array(np.array(0, np.int32), lo),
                numpy_helper.from_array(np.array(limits[value.name], np.int32), hi),
            ]
        )
        new_nodes += [
            helper.make_node(
                "Clip",
                [value.name, lo, hi],
                [f"{value.name}__clip"],
                name=f"clip_{value.name}",
            ),
            helper.make_node(
                "Cast",
                [f"{value.name}__clip"],
                [inner],
                to=TensorProto.INT64,
                name=f"cast_{value.name}",
            ),
        ]
    del graph.input[:]
    graph.input.extend(new_inputs)
    nodes = new_nodes + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.value_info[:]
    graph.output[0].name = HIDDEN
    for node in graph.node:
        for i, name in enumerate(node.output):
            if name == cut.hidden:
                node.output[i] = HIDDEN
    del graph.output[0].type.tensor_type.shape.dim[:]
    return body


def split_g2pw(
    src: Path, body_path: Path, head_dir: Path, rows: int, tokens: int, prefix: str
) -> HeadTables:
    """Write the static body graph and the head tables; returns the tables."""
    model = onnx.load(str(src))
    cut = find_cut(model)
    body = _body(model, cut, rows, tokens)
    body_path.parent.mkdir(parents=True, exist_ok=True)
    raw, fold = body_path.with_suffix(".raw.onnx"), body_path.with_suffix(".fold.onnx")
    onnx.save(body, str(raw))
    fold_static(raw, fold)
    folded = onnx.load(str(fold))
    raw.unlink()
    fold.unlink()
    narrow_int64(folded, set(BODY_INPUTS))
    folded = onnx.shape_inference.infer_shapes(folded, strict_mode=True)
    onnx.checker.check_model(folded)
    onnx.save(folded, str(body_path))
    left = [n.op_type for n in folded.graph.node if n.op_type in ("Shape", "ArgMax")]
    if left:
        raise SurgeryError(f"body still has dynamic/head ops {left}")
    cut.head.save(head_dir, prefix)
    log.info(
        "g2pw: body %s (hidden %d), head %d labels x %d chars",
        body_path.name,
        cut.head.pos_w.shape[1],
        cut.head.cls_w.shape[0],
        cut.head.char_desc.shape[0],
    )
    return cut.head


def hidden_probe(src: Path) -> onnx.ModelProto:
    """The original model with the body output added as a second output (for
    gating the split against the unsplit model)."""
    model = onnx.load(str(src))
    cut = find_cut(model)
    model.graph.output.append(onnx.ValueInfoProto(name=cut.hidden))
    return model
