"""The encoder side of MaskGCT's semantic codec (RepCodec) as a static graph:
w2v-BERT's normalised hidden rows padded to a bucket, and a 0/1 row mask that
makes the result the unpadded rows'.  The graph ends at the quantizer's
projected, L2-normalised latents; the nearest code and its embedding are CPU
work (voice/semantic_codes.py): an argmax over a few thousand dot products of
a handful of dimensions per row, in float64, and one small projection.

``semantic_codec.quantize`` (the upstream call): VocosBackbone (a 7-tap
convolution, LayerNorm, ConvNeXt blocks of a 7-tap depthwise convolution,
LayerNorm, a GELU MLP and a layer scale, a final LayerNorm), a Linear back to
the input width, then ``ResidualVQ`` with one ``FactorizedVectorQuantize``:
a weight-normed 1x1 ``in_project``, L2 normalisation of latents and codebook,
the code of the least euclidean distance, and ``out_project`` of that code's
raw embedding.  The convolutions are centred, so rows past the clip would
reach its last rows: every layer's output is masked, as upstream's zero
padding would have it.  All of upstream's rows are real here, the w2v-BERT
mask's last row of an odd clip included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import torch
import torch.nn.functional as F

from hexvoice_indextts.graphs.weights import Weights
from hexvoice_indextts.model_dir.config import SemanticCodec
from hexvoice_indextts.voice.semantic_codes import Codebook

#: VocosBackbone's kernels and LayerNorm eps (kmeans/vocos.py)
KERNEL: Final = 7
NORM_EPS: Final = 1e-6
#: the prefixes of the encoder and the (one) quantizer in RepCodec's state dict
ENCODER: Final = "encoder.0."
OUT_LINEAR: Final = "encoder.1."
QUANTIZER: Final = "quantizer.quantizers.0."


def weight_norm(g: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """torch's weight_norm (dim 0): g * v / ||v|| over all but dim 0."""
    return v * (g / v.flatten(1).norm(dim=1).reshape(g.shape))


class MaskedSemanticEncoder(Weights):
    """``forward(hidden [1, R, width], mask [1, R]) -> latents [1, R, code dim]``."""

    def __init__(self, state: Mapping[str, torch.Tensor], cfg: SemanticCodec) -> None:
        prefixes = (ENCODER, OUT_LINEAR, QUANTIZER + "in_project.")
        super().__init__({k: v for k, v in state.items() if k.startswith(prefixes)})
        self.layers = cfg.vocos_num_layers

    def _norm(self, x: torch.Tensor, key: str) -> torch.Tensor:
        dim = (x.shape[-1],)
        return F.layer_norm(
            x, dim, self.w(key + ".weight"), self.w(key + ".bias"), NORM_EPS
        )

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        e, m = ENCODER, mask[:, :, None]
        pad = KERNEL // 2
        x = F.conv1d(
            hidden.transpose(1, 2),
            self.w(e + "embed.weight"),
            self.w(e + "embed.bias"),
            padding=pad,
        )
        x = self._norm(x.transpose(1, 2), e + "norm") * m  # [1, R, dim]
        for i in range(self.layers):
            b = f"{e}convnext.{i}."
            y = F.conv1d(
                x.transpose(1, 2),
                self.w(b + "dwconv.weight"),
                self.w(b + "dwconv.bias"),
                padding=pad,
                groups=x.shape[-1],
            ).transpose(1, 2)
            y = F.linear(
                self._norm(y, b + "norm"),
                self.w(b + "pwconv1.weight"),
                self.w(b + "pwconv1.bias"),
            )
            y = F.linear(
                F.gelu(y), self.w(b + "pwconv2.weight"), self.w(b + "pwconv2.bias")
            )
            x = (x + self.w(b + "gamma") * y) * m
        x = self._norm(x, e + "final_layer_norm")
        x = F.linear(x, self.w(OUT_LINEAR + "weight"), self.w(OUT_LINEAR + "bias"))
        q = QUANTIZER + "in_project."
        w = weight_norm(self.w(q + "weight_g"), self.w(q + "weight_v"))
        z = F.conv1d(x.transpose(1, 2), w, self.w(q + "bias")).transpose(1, 2)
        return F.normalize(z, dim=-1) * m


def codebook_tables(state: Mapping[str, torch.Tensor]) -> Codebook:
    """The CPU side's tables: the codebook and out_project (weight norm applied)."""
    q = QUANTIZER
    with torch.no_grad():
        w = weight_norm(
            state[q + "out_project.weight_g"], state[q + "out_project.weight_v"]
        )
    return Codebook(
        state[q + "codebook.weight"].numpy(),
        w[:, :, 0].numpy(),
        state[q + "out_project.bias"].numpy(),
    )
