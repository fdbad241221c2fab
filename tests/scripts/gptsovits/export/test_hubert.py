"""export_hubert: static I/O of hubert + ssl_quant, and clear errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from scripts.gptsovits.export.hubert import export_hubert, load_hubert
from scripts.gptsovits.shapes import FULL_REFERENCE, TINY_REFERENCE
from scripts.gptsovits.synthetic.hubert import write_tiny_hubert
from scripts.gptsovits.synthetic.voice import TINY_SSL


@pytest.fixture(scope="module")
def hubert(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return load_hubert(write_tiny_hubert(tmp_path_factory.mktemp("hubert")))


@pytest.mark.parametrize("codes", [False, True])
def test_graph_io(hubert, sovits_model, tmp_path: Path, codes: bool) -> None:  # type: ignore[no-untyped-def]
    # upstream's full 10.6 s window (the tiny model exports it in seconds)
    hub, quant = export_hubert(
        hubert, sovits_model, FULL_REFERENCE, tmp_path, codes=codes
    )
    s = FULL_REFERENCE.hubert_samples
    assert [(t.name, t.shape) for t in hub.inputs] == [
        ("audio", (1, s)),
        ("conv_mask", (1, 1, 33919)),
        ("frame_mask", (1, 1, 529)),
    ]
    assert [(t.name, t.shape) for t in hub.outputs] == [("hidden", (1, TINY_SSL, 529))]
    (out,) = quant.outputs
    if codes:
        assert (out.name, out.dtype, out.shape) == ("codes", "int32", (1, 264))
    else:
        assert (out.name, out.dtype, out.shape) == (
            "proj",
            "float32",
            (1, TINY_SSL, 264),
        )


def test_width_mismatch_is_refused(hubert, sovits_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sovits_model_dims = sovits_model.dims
    other = replace(sovits_model_dims, ssl=TINY_SSL + 1)
    sovits_model.dims = other
    try:
        with pytest.raises(ValueError, match="HuBERT hidden width 48 != .* 49"):
            export_hubert(hubert, sovits_model, TINY_REFERENCE, tmp_path)
    finally:
        sovits_model.dims = sovits_model_dims


def test_not_a_hubert_dir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a HuBERT directory"):
        load_hubert(tmp_path)
