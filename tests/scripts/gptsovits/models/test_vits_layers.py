"""SoVITS layers: relative-position skew and the generator's frame mask."""

from __future__ import annotations

import torch

from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.vits_layers import REL_WINDOW, abs_to_rel, rel_to_abs


def test_rel_to_abs_matches_band_definition() -> None:
    m = 2 * REL_WINDOW + 1
    for t in (1, 3, 9, 17):
        rel = torch.randn(2, 3, t, m)
        out = rel_to_abs(rel)
        want = torch.zeros(2, 3, t, t)
        for i in range(t):
            for j in range(t):
                if abs(j - i) <= REL_WINDOW:
                    want[:, :, i, j] = rel[:, :, i, j - i + REL_WINDOW]
        assert torch.equal(out, want), t


def test_abs_to_rel_matches_band_definition() -> None:
    m = 2 * REL_WINDOW + 1
    for t in (1, 4, 9, 13):
        weights = torch.randn(1, 2, t, t)
        out = abs_to_rel(weights)
        want = torch.zeros(1, 2, t, m)
        for i in range(t):
            for c in range(m):
                j = i + c - REL_WINDOW
                if 0 <= j < t:
                    want[:, :, i, c] = weights[:, :, i, j]
        assert torch.equal(out, want), t


def test_generator_mask_equals_shorter_sequence(sovits_model: SovitsModel) -> None:
    """Frames after the mask end must act like the end of the sequence."""
    d = sovits_model.dims
    z = torch.randn(1, d.inter, 20)
    ge = torch.randn(1, d.gin, 1)
    padded = torch.cat([z, 5 * torch.randn(1, d.inter, 9)], dim=2)
    mask = torch.cat([torch.ones(1, 1, 20), torch.zeros(1, 1, 9)], dim=2)
    with torch.no_grad():
        full = sovits_model.dec(z, ge, torch.ones(1, 1, 20))
        windowed = sovits_model.dec(padded, ge, mask)[..., : 20 * d.hop]
        unmasked = sovits_model.dec(padded, ge, torch.ones(1, 1, 29))[..., : 20 * d.hop]
    torch.testing.assert_close(windowed, full, rtol=1e-5, atol=1e-7)
    assert not torch.allclose(unmasked, full, rtol=1e-3, atol=1e-6)  # mask matters
