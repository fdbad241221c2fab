"""The CPU backend's any-length twins of the static Piper graphs."""

from __future__ import annotations

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from scripts.piper import graphs  # noqa: E402
from scripts.piper.cpu_graphs import any_length  # noqa: E402
from scripts.piper.cuts import find_cuts  # noqa: E402
from tests.piper_bundles import voice_path  # noqa: E402


@pytest.fixture(scope="module")
def voice():  # type: ignore[no-untyped-def]
    model = onnx.load(voice_path())
    return model, find_cuts(model)


def _session(model):  # type: ignore[no-untyped-def]
    return ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )


@pytest.mark.parametrize("frames", [7, 40])
def test_decoder_runs_any_length_as_the_voice_does(voice, frames: int) -> None:  # type: ignore[no-untyped-def]
    model, cuts = voice
    dec = _session(any_length(model, cuts, "dec_W96"))
    full = _session(graphs.decoder_dynamic(model, cuts))
    z = np.random.default_rng(0).standard_normal((1, 192, frames)).astype(np.float32)
    got = dec.run(None, {"z": z, "frame_mask": np.ones((1, 1, frames), np.float32)})
    np.testing.assert_array_equal(got[0], full.run(None, {"z": z})[0])


def test_an_unknown_graph_key_is_an_error(voice) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="no piper graph 'sdp_P64'"):
        any_length(*voice, "sdp_P64")
