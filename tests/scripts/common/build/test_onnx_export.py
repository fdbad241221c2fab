"""export_static's ``fold`` option: ``fold=False`` keeps the tracer's graph
(GPT-SoVITS's bert and hubert graphs, which onnxruntime's later fusions cannot
take once folded), still linted and still one file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from torch import nn

from scripts.common.build.onnx_export import Pow2Error, export_static

#: what the tracer emits for a size it reads from its input (folded away by
#: the BASIC pass when the size is static)
SHAPE_OPS = {"ConstantOfShape", "Where"}


class _Sized(nn.Module):
    """Reads its input's size: the trace holds shape arithmetic."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + x[:, :1].expand(x.shape)


class _Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.pow(2)


def _ops(path: Path) -> set[str]:
    return {n.op_type for n in onnx.load(str(path)).graph.node}


def test_unfolded_keeps_the_tracers_graph_and_computes_the_same(
    tmp_path: Path,
) -> None:
    x = torch.randn(2, 3)
    folded = export_static(_Sized(), (x,), ["x"], ["y"], tmp_path / "f.onnx")
    kept = export_static(_Sized(), (x,), ["x"], ["y"], tmp_path / "k.onnx", fold=False)
    assert not _ops(folded.path) & SHAPE_OPS
    assert _ops(kept.path) & SHAPE_OPS
    assert onnx.load(str(kept.path)).producer_name == "pytorch"
    assert kept.inputs == folded.inputs and kept.outputs == folded.outputs
    (want,) = ort.InferenceSession(str(folded.path)).run(None, {"x": x.numpy()})
    (got,) = ort.InferenceSession(str(kept.path)).run(None, {"x": x.numpy()})
    np.testing.assert_array_equal(got, want)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.onnx", "k.onnx"]


def test_unfolded_is_still_linted_and_one_file(tmp_path: Path) -> None:
    x = torch.zeros(4)
    with pytest.raises(Pow2Error):
        export_static(_Square(), (x,), ["x"], ["y"], tmp_path / "sq.onnx", fold=False)
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="external data needs fold=True"):
        export_static(_Sized(), (x,), ["x"], ["y"], tmp_path / "e.onnx", True, False)
