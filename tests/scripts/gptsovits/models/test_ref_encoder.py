"""The masked MelStyleEncoder: a padded input with its mask gives the unpadded
(upstream, all-ones mask) result; RefEncGraph is decode's v2Pro get_ge."""

from __future__ import annotations

import pytest
import torch

from scripts.common.parity import rel_error
from scripts.gptsovits.models.ref_encoder import MelStyleEncoder, RefEncGraph

BINS, HIDDEN, OUT, SV, MRTE = 704, 32, 80, 160, 96
MAX_REL_ERR = 1e-6


def _spec(frames: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(1, BINS, frames, generator=g) * 5.0


@pytest.mark.parametrize("frames", [1, 7, 93])
def test_mask_gives_the_unpadded_style(frames: int) -> None:
    torch.manual_seed(0)
    enc = MelStyleEncoder(BINS, HIDDEN, OUT).eval()
    x = _spec(frames, 1)
    padded = torch.cat([x, _spec(100 - frames, 2)], dim=2)  # garbage padding
    mask = (torch.arange(100) < frames).float()[None, None]
    with torch.no_grad():
        want, got = enc(x), enc(padded, mask)
    assert got.shape == (1, OUT, 1)
    assert rel_error(reference=want.numpy(), test=got.numpy()) < MAX_REL_ERR


def test_ref_enc_graph_is_get_ge() -> None:
    torch.manual_seed(0)
    enc = MelStyleEncoder(BINS, HIDDEN, OUT).eval()
    sv_emb, prelu, to512 = (
        torch.nn.Linear(SV, OUT),
        torch.nn.PReLU(OUT),
        torch.nn.Linear(OUT, MRTE),
    )
    x, sv = _spec(20, 3), torch.randn(1, SV)
    with torch.no_grad():
        ge = prelu(enc(x) + sv_emb(sv).unsqueeze(-1))
        ge512 = to512(ge.transpose(1, 2)).transpose(1, 2)
        mask = (torch.arange(30) < 20).float()[None, None]
        got = RefEncGraph(enc, sv_emb, prelu, to512)(
            torch.cat([x, _spec(10, 4)], 2), mask, sv
        )
    assert rel_error(reference=ge.numpy(), test=got[0].numpy()) < MAX_REL_ERR
    assert rel_error(reference=ge512.numpy(), test=got[1].numpy()) < MAX_REL_ERR
