"""CPU gates of hubert + ssl_quant against upstream (HubertModel unpadded)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits.reference.params import PROMPT_ZEROS, ReferenceParams
from scripts.gptsovits.export.hubert import export_hubert, load_hubert
from scripts.gptsovits.shapes import FULL_REFERENCE, TINY_REFERENCE
from scripts.gptsovits.synthetic.hubert import fit_codebook, write_tiny_hubert
from scripts.gptsovits.verify import hubert as gates

RP = ReferenceParams(
    hubert_samples=TINY_REFERENCE.hubert_samples,
    spec_frames=1,
    fbank_frames=1,
    sv_dim=1,
)


@pytest.fixture(scope="module")
def models(sovits_model, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The tiny HuBERT and a SoVITS copy whose codebook sits on real ssl_proj
    frames (so many distinct, close codes compete)."""
    hubert = load_hubert(write_tiny_hubert(tmp_path_factory.mktemp("hubert")))
    sovits = copy.deepcopy(sovits_model)
    clip = np.concatenate([gates.gate_clip(6.0, 1), np.zeros(PROMPT_ZEROS, np.float32)])
    fit_codebook(sovits, hubert, torch.from_numpy(clip))
    return hubert, sovits


@pytest.mark.parametrize("codes", [False, True])
def test_cpu_gate_passes(models, tmp_path: Path, codes: bool) -> None:  # type: ignore[no-untyped-def]
    hubert, sovits = models
    hub, quant = export_hubert(hubert, sovits, TINY_REFERENCE, tmp_path, codes=codes)
    got = gates.gate_hubert_cpu(hubert, sovits, hub.path, quant.path, RP)
    assert got["hubert"] < gates.HUBERT_MAX_REL_ERR
    assert got["ssl_quant"] == 1.0


def test_tokens_are_upstreams_and_varied(models, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A 9.5 s clip (near the window's end) gives upstream's tokens exactly,
    and they are not one repeated code."""
    import dataclasses

    from daemon.engines.gptsovits.reference.prompt import PromptTokens
    from scripts.common.build.runners import cpu_runner
    from scripts.gptsovits.models.hubert import reference_tokens

    hubert, sovits = models
    # upstream's full 10.6 s window (CPU only: the tiny windows hold 4 s)
    hub, quant = export_hubert(hubert, sovits, FULL_REFERENCE, tmp_path)
    rp = dataclasses.replace(RP, hubert_samples=FULL_REFERENCE.hubert_samples)
    clip = gates.gate_clip(9.5, 2)
    cb = sovits.quantizer.embed.numpy()
    tokens = PromptTokens(cpu_runner(hub.path), cpu_runner(quant.path), rp, cb)(clip)
    wav = torch.from_numpy(np.concatenate([clip, np.zeros(PROMPT_ZEROS, np.float32)]))
    want = reference_tokens(hubert, sovits, wav).numpy()
    assert len(tokens) == len(want) == 252  # (9.5 s + 0.6 s) at 25 Hz, floor
    np.testing.assert_array_equal(tokens, want)
    assert len(set(want.tolist())) > 20


#: the smallest window a 3 s reference fits (3 s + the 9600 zeros): the
#: simulator needs minutes per HuBERT call at the full 10.6 s window
SIM_RP = ReferenceParams(
    hubert_samples=3 * 16000 + PROMPT_ZEROS, spec_frames=1, fbank_frames=1, sv_dim=1
)


@pytest.mark.slow
@pytest.mark.simulator
def test_sim_gate(models, qnn_cache, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Compiled hubert + ssl_quant on the simulator: cosine gated, token
    agreement measured, both against the CPU graphs."""
    import dataclasses

    from daemon.engines.gptsovits import layout
    from scripts.common.build.runners import Simulator
    from scripts.common.qnn_compile import compile_onnx

    hubert, sovits = models
    shapes = dataclasses.replace(TINY_REFERENCE, hubert_samples=SIM_RP.hubert_samples)
    hub, quant = export_hubert(hubert, sovits, shapes, tmp_path)
    bins = {
        layout.HUBERT: compile_onnx(hub.path, tmp_path, cache_dir=qnn_cache).bin_path,
        layout.SSL_QUANT: compile_onnx(
            quant.path, tmp_path, cache_dir=qnn_cache
        ).bin_path,
    }
    sim = Simulator()
    try:
        clip = gates.gate_clip(3.0)
        res = gates.gate_hubert_sim(
            sim, bins, hub.path, quant.path, SIM_RP, sovits, clip
        )
    finally:
        sim.close()
    assert res["hubert"].value >= gates.SIM_MIN_COSINE
    assert res["ssl_quant"].value >= 0.8  # measured; near-ties may move
    print(
        f"simulator: cosine {res['hubert'].value:.6f}, token agreement "
        f"{res['ssl_quant'].value:.3f}, seconds {res['hubert'].seconds}"
    )
