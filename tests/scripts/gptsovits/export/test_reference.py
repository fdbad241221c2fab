"""ref_enc / sv export: static I/O, and the CPU gates on the runtime's Style."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.gptsovits.export.reference import export_reference
from scripts.gptsovits.models.eres2net import Eres2NetDims
from scripts.gptsovits.shapes import (
    FULL_REFERENCE,
    TINY_REFERENCE,
    ReferenceShapes,
)
from scripts.gptsovits.synthetic.sv import random_sv
from scripts.gptsovits.verify import reference as gates

#: small windows that still pad the 3 s probe (150 spectrogram / 298 fbank frames)
SMALL = ReferenceShapes(hubert_samples=1, spec_frames=160, fbank_frames=320)


@pytest.fixture(scope="module")
def reference_graphs(sovits_model, tmp_path_factory):  # type: ignore[no-untyped-def]
    sv = random_sv(0)
    specs = export_reference(sovits_model, sv, SMALL, tmp_path_factory.mktemp("ref"))
    return sv, {s.name: s for s in specs}


def test_graphs_have_the_static_io(reference_graphs, sovits_model) -> None:  # type: ignore[no-untyped-def]
    _, specs = reference_graphs
    d = sovits_model.dims
    ref, sv = specs["ref_enc"], specs["sv"]
    assert [(t.name, t.shape) for t in ref.inputs] == [
        ("spec", (1, 704, 160)),
        ("mask", (1, 1, 160)),
        ("sv", (1, d.sv)),
    ]
    assert [(t.name, t.shape) for t in ref.outputs] == [
        ("ge", (1, d.gin, 1)),
        ("ge512", (1, d.mrte, 1)),
    ]
    assert [(t.name, t.shape) for t in sv.inputs] == [
        ("fbank", (1, 320, 80)),
        ("mask", (1, 320)),
    ]
    assert [(t.name, t.shape) for t in sv.outputs] == [("emb", (1, d.sv))]


def test_cpu_gates_pass_on_the_unpadded_reference(
    reference_graphs, sovits_model
) -> None:  # type: ignore[no-untyped-def]
    sv, specs = reference_graphs
    rp = gates.reference_params(sovits_model, SMALL.spec_frames, SMALL.fbank_frames)
    metrics = gates.gate_reference_cpu(
        sovits_model, sv, specs["ref_enc"].path, specs["sv"].path, rp
    )
    assert max(metrics.values()) < gates.MAX_REL_ERR


def test_an_sv_of_another_width_is_refused(sovits_model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = random_sv(
        0, Eres2NetDims.published(m_channels=4, base_width=16, scale=2, expansion=1)
    )
    with pytest.raises(ValueError, match="embedding is 320 wide.*takes 160"):
        export_reference(sovits_model, other, SMALL, tmp_path)


def test_reference_shapes_hold_the_longest_clip() -> None:
    # upstream's longest reference (10 s); the tiny windows' 4 s
    assert (FULL_REFERENCE.spec_frames, FULL_REFERENCE.fbank_frames) == (500, 998)
    assert (TINY_REFERENCE.spec_frames, TINY_REFERENCE.fbank_frames) == (200, 398)
