"""A tiny ERes2NetV2 speaker-verification checkpoint for tests, written like
upstream's pretrained_eres2netv2w24s4ep4.ckpt: a plain state dict with
upstream's key names, including the pooling head forward3 does not use.

Its embedding (channels x 10 frequency bins) is the synthetic SoVITS voice's
sv width, so ``sv`` and ``ref_enc`` chain: 2 stem channels x 8 x expansion 1
x 10 bins = 160 = TINY_SV. baseWidth 32 is the smallest that leaves layer1's
split one channel wide at 2 stem channels (floor(2 x 32 / 64) = 1).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from scripts.gptsovits.models.eres2net import FEAT_DIM, Eres2NetDims, ERes2NetV2
from scripts.gptsovits.synthetic.voice import TINY_SV

# One block per layer still runs every block kind: layer1's identity shortcut,
# layer2's strided conv shortcut, the AFF blocks of layers 3-4. It halves the
# simulator's time per call at 998 frames (blocks 2/1/2/1: 54 s; 1/1/1/1: 27 s).
TINY_SV_DIMS = Eres2NetDims.published(
    m_channels=2, base_width=32, scale=2, expansion=1, num_blocks=(1, 1, 1, 1)
)
#: upstream ERes2NetV2 embedding_size (seg_1's output; unused by forward3)
HEAD_EMBEDDING = 192
#: TSTP pooling concatenates mean and std
HEAD_STATS = 2


def random_sv(seed: int = 0, dims: Eres2NetDims = TINY_SV_DIMS) -> ERes2NetV2:
    """Random weights and BatchNorm statistics (so folding them is tested)."""
    torch.manual_seed(seed)
    model = ERes2NetV2(dims)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.normal_(1.0, 0.1)
                module.bias.normal_(0.0, 0.1)
    return model.eval()


def write_tiny_sv(path: Path, seed: int = 0) -> Path:
    """Write the tiny checkpoint to ``path``; its embedding width is TINY_SV."""
    model = random_sv(seed)
    if model.dims.embedding != TINY_SV:
        raise AssertionError(f"tiny sv width {model.dims.embedding} != {TINY_SV}")
    state = dict(model.state_dict())
    # ERes2NetV2.stats_dim = int(feat_dim / 8) * m_channels * 8, x expansion
    stats = FEAT_DIM // 8 * model.dims.m_channels * 8 * model.dims.expansion
    head = nn.Linear(stats * HEAD_STATS, HEAD_EMBEDDING)
    state.update({f"seg_1.{k}": v for k, v in head.state_dict().items()})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, path)
    return path
