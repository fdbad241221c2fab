"""ERes2NetV2 (forward3): upstream's keys, the mask, BatchNorm folding.

Checked once against upstream's own GPT_SoVITS/eres2net/ERes2NetV2.py (fetched,
not kept): identical output (rel error 0.0) on the unpadded input at the tiny
and the published sizes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from scripts.common.parity import rel_error
from scripts.gptsovits.models.eres2net import (
    Eres2NetDims,
    ERes2NetV2,
    fold_batchnorm,
    load_sv_checkpoint,
)
from scripts.gptsovits.synthetic.sv import TINY_SV_DIMS, random_sv, write_tiny_sv
from scripts.gptsovits.synthetic.voice import TINY_SV

#: upstream ERes2NetV2(baseWidth=24, scale=4, expansion=4): 1001 state tensors,
#: 53 513 632 parameters, of which seg_1 (the unused head) holds 7 864 512
PUBLISHED_TENSORS = 1001 - 2
PUBLISHED_PARAMS = 53_513_632 - 7_864_512
PUBLISHED_EMBEDDING = 20480  # 2048 channels x 10 bins (sv_emb's input)
MASK_REL_ERR = 1e-6


def _feats(frames: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(1, frames, 80, generator=g) * 2.0 - 6.0


def test_tiny_checkpoint_has_upstreams_format(tmp_path: Path) -> None:
    path = write_tiny_sv(tmp_path / "sv.ckpt")
    state = torch.load(path, weights_only=True)
    assert (
        "seg_1.weight" in state and "layer3.0.fuse_models.0.local_att.0.weight" in state
    )
    model = load_sv_checkpoint(path)
    assert model.dims == TINY_SV_DIMS
    assert model.dims.embedding == TINY_SV
    with torch.no_grad():
        assert model(_feats(40)).shape == (1, TINY_SV)


#: the tiny widths with more than one block per layer (stride-1 blocks after
#: the strided ones, as in the published (3, 4, 6, 3))
DEEPER = Eres2NetDims.published(
    m_channels=2, base_width=32, scale=2, expansion=1, num_blocks=(2, 2, 2, 2)
)


@pytest.mark.parametrize(
    ("frames", "dims"),
    [(37, TINY_SV_DIMS), (64, TINY_SV_DIMS), (101, TINY_SV_DIMS), (45, DEEPER)],
)
def test_mask_gives_the_unpadded_embedding(frames: int, dims: Eres2NetDims) -> None:
    model = random_sv(1, dims)
    x = _feats(frames)
    padded = torch.cat([x, _feats(128 - frames, seed=9)], dim=1)  # garbage padding
    mask = (torch.arange(128) < frames).float()[None]
    with torch.no_grad():
        want, got = model(x), model(padded, mask)
    assert rel_error(reference=want.numpy(), test=got.numpy()) < MASK_REL_ERR


def test_folded_batchnorm_keeps_the_embedding() -> None:
    model = random_sv(2)
    x = _feats(50)
    with torch.no_grad():
        want = model(x)
        got = fold_batchnorm(model)(x)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    assert rel_error(reference=want.numpy(), test=got.numpy()) < MASK_REL_ERR


def test_published_architecture_matches_upstreams_sizes() -> None:
    dims = Eres2NetDims.published()
    assert dims.widths == (24, 48, 96, 192) and dims.embedding == PUBLISHED_EMBEDDING
    model = ERes2NetV2(dims)
    assert len(model.state_dict()) == PUBLISHED_TENSORS
    assert sum(p.numel() for p in model.parameters()) == PUBLISHED_PARAMS
    assert Eres2NetDims.from_state(model.state_dict()) == dims


def test_not_an_eres2net_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an ERes2NetV2 state dict"):
        ERes2NetV2.from_state({"weight": torch.zeros(1)})
    state = dict(random_sv().state_dict())
    state["layer1.0.extra.weight"] = torch.zeros(1)
    with pytest.raises(ValueError, match="unexpected"):
        ERes2NetV2.from_state(state)
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="cannot read an sv checkpoint"):
        load_sv_checkpoint(bad)
    torch.save([1, 2], tmp_path / "list.ckpt")
    with pytest.raises(ValueError, match="is a state dict"):
        load_sv_checkpoint(tmp_path / "list.ckpt")
    with pytest.raises(ValueError, match="0 channels"):
        Eres2NetDims.published(m_channels=1, base_width=24)
