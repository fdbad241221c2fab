"""Style on the CPU backend: the graphs' padded result is torch's unpadded one
(the full gate is scripts/gptsovits/verify/reference.py); clear errors otherwise."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.reference.params import ReferenceParams
from daemon.engines.gptsovits.reference.style import Style
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import Cancelled, CancelToken
from scripts.common.parity import rel_error

SPEC_FRAMES, FBANK_FRAMES = 160, 320  # up to 3.2 s
MAX_REL_ERR = 1e-4


@pytest.fixture(scope="module")
def style_parts(tmp_path_factory):  # type: ignore[no-untyped-def]
    from scripts.common.build.runners import cpu_runner
    from scripts.gptsovits.export.reference import export_reference
    from scripts.gptsovits.shapes import ReferenceShapes
    from scripts.gptsovits.synthetic.sv import random_sv
    from scripts.gptsovits.synthetic.voice import random_sovits, tiny_sovits_hparams

    sovits, sv = random_sovits(tiny_sovits_hparams("style"), 3), random_sv(4)
    shapes = ReferenceShapes(1, SPEC_FRAMES, FBANK_FRAMES)
    ref, svg = export_reference(sovits, sv, shapes, tmp_path_factory.mktemp("style"))
    rp = ReferenceParams(1, SPEC_FRAMES, FBANK_FRAMES, sovits.dims.sv)
    runners = cpu_runner(ref.path, "ref_enc"), cpu_runner(svg.path, "sv")
    return sovits, sv, rp, runners


def _clip(seconds: float) -> np.ndarray:
    from scripts.gptsovits.verify.reference import probe_clip

    return probe_clip(seconds, seed=5)


def test_style_is_the_unpadded_ge(style_parts) -> None:  # type: ignore[no-untyped-def]
    from daemon.engines.gptsovits.reference.audio import sv_copy
    from daemon.engines.gptsovits.reference.spectrogram import linear_spectrogram
    from daemon.sdk.audio.fbank import kaldi_fbank

    sovits, sv, rp, runners = style_parts
    clip = _clip(2.0)
    ge, ge512 = Style(*runners, rp)(clip)
    assert ge.shape == (1, sovits.dims.gin, 1) and ge512.shape == (
        1,
        sovits.dims.mrte,
        1,
    )
    with torch.no_grad():
        emb = sv(torch.from_numpy(kaldi_fbank(sv_copy(clip)))[None])
        spec = torch.from_numpy(linear_spectrogram(clip))[None]
        want_ge, want_512 = sovits.global_embedding(spec, emb)
    assert rel_error(reference=want_ge.numpy(), test=ge) < MAX_REL_ERR
    assert rel_error(reference=want_512.numpy(), test=ge512) < MAX_REL_ERR


def test_a_clip_longer_than_the_graphs_is_refused(style_parts) -> None:  # type: ignore[no-untyped-def]
    *_, rp, runners = style_parts
    with pytest.raises(
        ValueError, match="fbank frames .* the sv graph takes at most 320"
    ):
        Style(*runners, rp)(_clip(3.5))


def test_a_clip_too_short_for_a_frame_is_refused(style_parts) -> None:  # type: ignore[no-untyped-def]
    *_, rp, runners = style_parts
    with pytest.raises(ValueError, match="shorter than one 400-sample frame"):
        Style(*runners, rp)(np.zeros(500, np.float32))


def test_cancel_stops_between_graphs(style_parts) -> None:  # type: ignore[no-untyped-def]
    *_, rp, runners = style_parts
    token = CancelToken()
    token.cancel("stop")
    with pytest.raises(Cancelled):
        Style(*runners, rp)(_clip(1.0), token)


def test_graphs_of_other_sizes_are_refused(style_parts) -> None:  # type: ignore[no-untyped-def]
    *_, rp, (ref, sv) = style_parts
    with pytest.raises(BundleError, match="no 3-d 'ge' and 'ge512' outputs"):
        Style(sv, sv, rp)
    other = ReferenceParams(1, SPEC_FRAMES + 1, FBANK_FRAMES, rp.sv_dim)
    with pytest.raises(BundleError):
        Style(ref, sv, other)
