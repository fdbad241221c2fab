"""PromptTokens on the exported graphs (CPU backend): upstream's tokens, and a
clear error for every unusable clip or bundle."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.reference.params import PROMPT_ZEROS, ReferenceParams
from daemon.engines.gptsovits.reference.prompt import PromptTokens, conv_lengths
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import Cancelled, CancelToken
from scripts.common.build.runners import cpu_runner
from scripts.gptsovits.export.hubert import export_hubert, load_hubert
from scripts.gptsovits.models.hubert import reference_tokens
from scripts.gptsovits.shapes import TINY_REFERENCE
from scripts.gptsovits.synthetic.hubert import fit_codebook, write_tiny_hubert
from scripts.gptsovits.synthetic.voice import random_sovits, tiny_sovits_hparams
from scripts.gptsovits.verify.hubert import gate_clip

#: a 4 s window (+ the zeros): small and fast, and a 5 s clip does not fit
WINDOW = 4 * 16000 + PROMPT_ZEROS
RP = ReferenceParams(hubert_samples=WINDOW, spec_frames=1, fbank_frames=1, sv_dim=1)


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    hubert = load_hubert(write_tiny_hubert(tmp_path_factory.mktemp("hubert")))
    sovits = random_sovits(tiny_sovits_hparams("prompt"), seed=0)
    fit = np.concatenate([gate_clip(4.0, 3), np.zeros(PROMPT_ZEROS, np.float32)])
    fit_codebook(sovits, hubert, torch.from_numpy(fit))
    out = {}
    for codes in (False, True):
        d = tmp_path_factory.mktemp(f"prompt_codes{codes}")
        shapes = dataclasses.replace(TINY_REFERENCE, hubert_samples=WINDOW)
        hub, quant = export_hubert(hubert, sovits, shapes, d, codes)
        out[codes] = (cpu_runner(hub.path), cpu_runner(quant.path))
    return hubert, sovits, out


def _prompt(graphs, codes: bool = False) -> PromptTokens:  # type: ignore[no-untyped-def]
    _, sovits, runners = graphs
    return PromptTokens(*runners[codes], RP, sovits.quantizer.embed.numpy())


@pytest.mark.parametrize("codes", [False, True])
@pytest.mark.parametrize("seconds", [3.0, 4.0])
def test_tokens_are_upstreams(graphs, codes: bool, seconds: float) -> None:  # type: ignore[no-untyped-def]
    hubert, sovits, _ = graphs
    clip = gate_clip(seconds, 5)
    got = _prompt(graphs, codes)(clip)
    wav = np.concatenate([clip, np.zeros(PROMPT_ZEROS, np.float32)])
    want = reference_tokens(hubert, sovits, torch.from_numpy(wav)).numpy()
    assert got.dtype == np.int64
    assert len(got) == conv_lengths(len(wav))[-1] // 2
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("clip", "message"),
    [
        (np.zeros(2 * 16000, np.float32), "reference is 2.00 s; it must be 3-10 s"),
        (np.zeros(10 * 16000 + 1, np.float32), "10.00 s; it must be 3-10 s"),
        (np.zeros(5 * 16000, np.float32), "hubert graph holds 4.00 s"),
        (np.zeros((2, 3 * 16000), np.float32), "must be 1-d float samples"),
        (np.zeros(3 * 16000, np.int16), "must be 1-d float samples, got int16"),
        (np.full(3 * 16000, np.nan, np.float32), "NaN or infinite"),
    ],
)
def test_unusable_clip(graphs, clip: np.ndarray, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        _prompt(graphs)(clip)


def test_cancel_between_graphs(graphs) -> None:  # type: ignore[no-untyped-def]
    token = CancelToken()
    token.cancel("stop")
    with pytest.raises(Cancelled):
        _prompt(graphs)(gate_clip(3.0), token)


def test_proj_graph_needs_the_codebook(graphs) -> None:  # type: ignore[no-untyped-def]
    _, _, runners = graphs
    with pytest.raises(BundleError, match="codebook is needed"):
        PromptTokens(*runners[False], RP)
    PromptTokens(*runners[True], RP)  # in-graph codes: no codebook


def test_window_must_hold_the_shortest_reference(graphs) -> None:  # type: ignore[no-untyped-def]
    _, _, runners = graphs
    small = ReferenceParams(hubert_samples=16000, spec_frames=1, fbank_frames=1,
                            sv_dim=1)  # fmt: skip
    with pytest.raises(BundleError, match="cannot hold a 3 s reference"):
        PromptTokens(*runners[True], small)


def test_window_must_match_the_graph(graphs) -> None:  # type: ignore[no-untyped-def]
    _, _, runners = graphs
    other = ReferenceParams(hubert_samples=WINDOW + 320, spec_frames=1,
                            fbank_frames=1, sv_dim=1)  # fmt: skip
    with pytest.raises(BundleError, match="graph hubert: 'audio' is"):
        PromptTokens(*runners[True], other)
