"""Export the style-side reference graphs, ``ref_enc`` and ``sv``, to static fp32 ONNX.

- ``ref_enc``: spec [1, 704, spec_frames] (the lowest 704 linear bins, zero past
  the clip), mask [1, 1, spec_frames], sv [1, sv_dim] -> ge [1, gin, 1] (after
  PReLU), ge512 [1, mrte, 1]: the SoVITS model's own ref_enc / sv_emb / prelu /
  ge_to512 (scripts/gptsovits/models/ref_encoder.py RefEncGraph).
- ``sv``: fbank [1, fbank_frames, 80], mask [1, fbank_frames] -> emb [1, sv_dim]:
  ERes2NetV2.forward3 with its BatchNorms folded into the convolutions.

Masks are 1 for the clip's frames and 0 for the padding; both graphs then give
the unpadded result (the gates in scripts/gptsovits/verify/reference.py check it).
"""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from torch import Tensor, nn

from scripts.common.build.onnx_export import GraphSpec, export_static
from scripts.gptsovits.models.eres2net import FEAT_DIM, ERes2NetV2, fold_batchnorm
from scripts.gptsovits.models.ref_encoder import RefEncGraph
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.shapes import EXTERNAL_DATA, ReferenceShapes

REF_ENC_INPUTS = ["spec", "mask", "sv"]
REF_ENC_OUTPUTS = ["ge", "ge512"]
SV_INPUTS = ["fbank", "mask"]
SV_OUTPUTS = ["emb"]


class SvGraph(nn.Module):
    """The ``sv`` graph: BatchNorm-folded ERes2NetV2 with a frame mask."""

    def __init__(self, model: ERes2NetV2) -> None:
        super().__init__()
        self.model = fold_batchnorm(copy.deepcopy(model))

    def forward(self, fbank: Tensor, mask: Tensor) -> Tensor:
        return self.model(fbank, mask)


def ref_enc_graph(sovits: SovitsModel) -> RefEncGraph:
    return RefEncGraph(sovits.ref_enc, sovits.sv_emb, sovits.prelu, sovits.ge_to512)


def export_ref_enc(sovits: SovitsModel, frames: int, out_dir: Path) -> GraphSpec:
    d = sovits.dims
    args = (
        torch.zeros(1, d.ref_bins, frames),
        torch.ones(1, 1, frames),
        torch.zeros(1, d.sv),
    )
    return export_static(
        ref_enc_graph(sovits).eval(),
        args,
        REF_ENC_INPUTS,
        REF_ENC_OUTPUTS,
        Path(out_dir) / "ref_enc.onnx",
        EXTERNAL_DATA,
    )


def export_sv(sv: ERes2NetV2, frames: int, out_dir: Path) -> GraphSpec:
    args = (torch.zeros(1, frames, FEAT_DIM), torch.ones(1, frames))
    path = Path(out_dir) / "sv.onnx"
    return export_static(SvGraph(sv), args, SV_INPUTS, SV_OUTPUTS, path, EXTERNAL_DATA)


def export_reference(
    sovits: SovitsModel, sv: ERes2NetV2, shapes: ReferenceShapes, out_dir: Path
) -> list[GraphSpec]:
    """ref_enc.onnx and sv.onnx; the sv embedding must be what sv_emb takes."""
    if sv.dims.embedding != sovits.dims.sv:
        raise ValueError(
            f"the sv checkpoint's embedding is {sv.dims.embedding} wide; the SoVITS "
            f"model's sv_emb takes {sovits.dims.sv}"
        )
    return [
        export_ref_enc(sovits, shapes.spec_frames, out_dir),
        export_sv(sv, shapes.fbank_frames, out_dir),
    ]
