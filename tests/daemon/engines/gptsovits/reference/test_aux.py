"""mean_style against upstream's list-of-refer decode: ge averaged after PReLU,
ge512 = ge_to512(mean ge), which must equal the mean of the per-clip ge512."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.gptsovits.reference.aux import mean_style

torch = pytest.importorskip("torch")

# Full-size v2Pro widths (docs/gpt-sovits.md, SoVITS config): gin 1024, MRTE 512.
GIN, MRTE = 1024, 512


@torch.no_grad()
@pytest.mark.parametrize("n_refs", [2, 3, 5])
def test_mean_of_ge512_equals_ge_to512_of_the_mean_ge(n_refs: int):
    torch.manual_seed(n_refs)
    prelu, ge_to512 = torch.nn.PReLU(GIN), torch.nn.Linear(GIN, MRTE)
    torch.nn.init.uniform_(prelu.weight, 0.0, 0.5)
    # what ref_enc + sv_emb give per clip, before PReLU ([1, gin, 1])
    pre = [torch.randn(1, GIN, 1) * 3 for _ in range(n_refs)]
    ges = [prelu(x) for x in pre]

    def to512(ge):
        return ge_to512(ge.transpose(2, 1)).transpose(2, 1)

    styles = [(ge.numpy(), to512(ge).numpy()) for ge in ges]
    # upstream SynthesizerTrn.decode: torch.stack(ges, 0).mean(0), then ge_to512
    want_ge = torch.stack(ges, 0).mean(0)
    want_512 = to512(want_ge).numpy()
    ge, ge512 = mean_style(styles)
    assert ge.shape == (1, GIN, 1) and ge512.shape == (1, MRTE, 1)
    assert ge.dtype == ge512.dtype == np.float32
    np.testing.assert_allclose(ge, want_ge.numpy(), rtol=0, atol=1e-6)
    err = np.abs(ge512 - want_512).max() / np.abs(want_512).max()
    print(f"{n_refs} refs: mean of ge512 vs ge_to512(mean ge): rel {err:.2e}")
    assert err < 1e-6  # float32 rounding (eps 1.2e-7) over a 1024-term dot


def test_one_reference_is_itself():
    ge = np.random.default_rng(0).standard_normal((1, 8, 1)).astype(np.float32)
    ge512 = np.ones((1, 4, 1), np.float32)
    got = mean_style([(ge, ge512)])
    assert np.array_equal(got[0], ge) and np.array_equal(got[1], ge512)


def _z(channels: int) -> np.ndarray:
    return np.zeros((1, channels, 1), np.float32)


@pytest.mark.parametrize(
    ("styles", "match"),
    [
        ([], "at least one"),
        ([(_z(8), _z(4)), (_z(9), _z(4))], "differs"),
        ([(np.zeros((8, 1)), _z(4))], r"\[1, C, 1\]"),
        ([(_z(8) * np.nan, _z(4))], "not finite"),
        ([(_z(8),)], "pair"),
    ],
)
def test_unusable_styles_are_refused(styles, match):
    with pytest.raises(ValueError, match=match):
        mean_style(styles)
