"""export_static and its Pow(x, 2) lint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from scripts.common.build.onnx_export import Pow2Error, export_static, no_pow2
from scripts.qwen3.common.decoder import RmsNorm


class _Square(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.pow(2) + x.pow(3)


def test_upstreams_rms_norm_is_refused(asr_model: Any, tmp_path: Path) -> None:
    """The upstream norm exports Pow(x, 2): the export refuses it and leaves
    no file behind; the rewritten norm exports fine."""
    norm = asr_model.thinker.model.norm
    x = torch.zeros(1, 3, norm.weight.shape[0])
    with pytest.raises(Pow2Error, match="Pow"):
        export_static(norm, (x,), ["x"], ["y"], tmp_path / "upstream.onnx")
    assert not (tmp_path / "upstream.onnx").exists()
    spec = export_static(RmsNorm(norm), (x,), ["x"], ["y"], tmp_path / "ours.onnx")
    assert spec.outputs[0].shape == (1, 3, norm.weight.shape[0])
    no_pow2(tmp_path / "ours.onnx")


def test_only_the_square_is_refused(tmp_path: Path) -> None:
    class Cube(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.pow(3)

    export_static(Cube(), (torch.zeros(4),), ["x"], ["y"], tmp_path / "cube.onnx")
    no_pow2(tmp_path / "cube.onnx")
    with pytest.raises(Pow2Error):
        export_static(_Square(), (torch.zeros(4),), ["x"], ["y"], tmp_path / "sq.onnx")


def test_external_data_holds_the_weights_beside_the_graph(
    asr_model: Any, tmp_path: Path
) -> None:
    """external_data=True (automatic past 1 GiB of weights, for the > 2 GiB
    full-size decoder graphs): <name>.onnx + <name>.onnx.data, the graph file
    small, and the graph computes what the single-file export does."""
    import numpy as np
    import onnxruntime as ort

    norm = asr_model.thinker.model.norm
    big = nn.Linear(norm.weight.shape[0], 256)
    module = nn.Sequential(RmsNorm(norm), big).eval()
    x = torch.randn(1, 3, norm.weight.shape[0])
    one = export_static(module, (x,), ["x"], ["y"], tmp_path / "one.onnx")
    two = export_static(module, (x,), ["x"], ["y"], tmp_path / "two.onnx", True)
    data = tmp_path / "two.onnx.data"
    assert data.stat().st_size >= big.weight.numel() * 4
    assert (tmp_path / "two.onnx").stat().st_size < 4096 < one.path.stat().st_size
    assert one.inputs == two.inputs and one.outputs == two.outputs
    feeds = {"x": x.numpy()}
    (want,) = ort.InferenceSession(str(one.path)).run(None, feeds)
    (got,) = ort.InferenceSession(str(two.path)).run(None, feeds)
    np.testing.assert_array_equal(got, want)
    no_pow2(two.path)
