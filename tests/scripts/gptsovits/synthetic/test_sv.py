"""The tiny sv checkpoint feeds the synthetic voice's sv_emb."""

from __future__ import annotations

from pathlib import Path

from scripts.gptsovits.models.eres2net import load_sv_checkpoint
from scripts.gptsovits.synthetic.sv import write_tiny_sv
from scripts.gptsovits.synthetic.voice import TINY_SV


def test_tiny_sv_width_is_the_voices(
    synthetic_voice, sovits_model, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    model = load_sv_checkpoint(write_tiny_sv(tmp_path / "sv.ckpt"))
    assert model.dims.embedding == TINY_SV == sovits_model.dims.sv
