"""The vocoder window overlap of each shape set against the generator's reach."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from scripts.gptsovits.shapes import FULL, TINY
from scripts.gptsovits.synthetic.voice import TINY_SOVITS_MODEL

# GPT-SoVITS v2Pro's SoVITS generator config (s2v2Pro.json), as SovitsDims names it.
V2PRO = SimpleNamespace(
    upsample_rates=(10, 8, 2, 2, 2),
    upsample_kernels=(16, 16, 8, 2, 2),
    rb_kernels=(3, 7, 11),
    rb_dilations=((1, 3, 5),) * 3,
)
TINY_VOCODER = SimpleNamespace(
    upsample_rates=tuple(TINY_SOVITS_MODEL["upsample_rates"]),
    upsample_kernels=tuple(TINY_SOVITS_MODEL["upsample_kernel_sizes"]),
    rb_kernels=tuple(TINY_SOVITS_MODEL["resblock_kernel_sizes"]),
    rb_dilations=tuple(map(tuple, TINY_SOVITS_MODEL["resblock_dilation_sizes"])),
)


def test_full_shapes_cover_the_upstream_generator() -> None:
    assert 11.0 < FULL.check_vocoder(V2PRO) <= FULL.gen_overlap


def test_tiny_shapes_cover_the_tiny_generator_but_not_upstreams() -> None:
    assert TINY.check_vocoder(TINY_VOCODER) <= TINY.gen_overlap
    with pytest.raises(ValueError, match=r"vits_gen: window overlap 6 frames .* >= 12"):
        TINY.check_vocoder(V2PRO)
