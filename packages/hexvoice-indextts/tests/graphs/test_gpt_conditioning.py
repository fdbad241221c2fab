"""The GPT's per-voice conditionings as masked static graphs: the speaker
latents equal upstream's UnifiedVoice.get_conditioning and the emotion vector
its get_emovec (called as infer_v2 calls them, with the feature width as the
length), on rows padded into buckets, for the tiny config and one with two
conformer blocks and other head counts, weights far from init; the exported
graphs run the same on onnxruntime CPU and on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from indextts.gpt.model_v2 import UnifiedVoice
from scripts.common.build.onnx_export import export_static
from scripts.common.floor import rel_gate

from hexvoice_indextts.graphs.conformer import MaskedConformer, subsampled
from hexvoice_indextts.graphs.gpt_conditioning import (
    INPUTS,
    EmotionVector,
    SpeakerLatents,
    gpt_state,
)
from hexvoice_indextts.model_dir.config import Conformer, Gpt
from hexvoice_indextts.tiny.model import tiny_config

TINY = tiny_config()["gpt"]
OTHER = {
    **TINY,
    "condition_module": {
        **TINY["condition_module"],
        "num_blocks": 2,
        "attention_heads": 4,
    },
    "emo_condition_module": {**TINY["emo_condition_module"], "attention_heads": 2},
}
#: infer_v2 passes spk_cond_emb.shape[-1], the feature width, as the length
UPSTREAM_LENGTH = 1024
BOUND = 1e-5


def typed(cfg: dict[str, Any]) -> Gpt:
    modules = {
        k: Conformer(**cfg[k]) for k in ("condition_module", "emo_condition_module")
    }
    return Gpt(**{**cfg, **modules})


@pytest.fixture(scope="module", params=[0, 1])
def model(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Any:
    cfg = (TINY, OTHER)[request.param]
    torch.manual_seed(request.param)
    gpt = UnifiedVoice(**cfg).eval()
    with torch.no_grad():  # the conditioning side only, far from its init
        for name, p in gpt.named_parameters():
            if "condition" in name or "perceiver" in name or "emo" in name:
                p.add_(torch.randn_like(p) * 0.05)
    path = tmp_path_factory.mktemp("gpt") / "gpt.pth"
    torch.save(gpt.state_dict(), path)  # upstream's format: a plain state dict
    state = gpt_state(path)
    return (
        gpt,
        SpeakerLatents(state, typed(cfg)).eval(),
        EmotionVector(state, typed(cfg)).eval(),
    )


def padded(x: torch.Tensor, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = x.shape[1]
    out, mask = torch.zeros(1, rows, x.shape[2]), torch.zeros(1, rows)
    out[0, :n], mask[0, :n] = x[0], 1.0
    return out, mask


def upstream(gpt: Any, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    length = torch.tensor([UPSTREAM_LENGTH])
    return gpt.get_conditioning(x.transpose(1, 2), length), gpt.get_emovec(x, length)


@pytest.mark.parametrize(("n", "rows"), [(3, 8), (5, 8), (41, 48), (48, 48)])
def test_the_conditionings_are_upstreams(model: Any, n: int, rows: int) -> None:
    gpt, latents, emotion = model
    x = torch.randn(1, n, 1024, generator=torch.Generator().manual_seed(n))
    with torch.no_grad():
        ref = upstream(gpt, x)
        gpt.double()
        exact = upstream(gpt, x.double())
        gpt.float()
        got = latents(*padded(x, rows)), emotion(*padded(x, rows))
        unmasked = emotion(padded(x, rows)[0], torch.ones(1, rows))
    for name, e, r, g in zip(("latents", "emo_vec"), exact, ref, got, strict=True):
        gate = rel_gate(name, BOUND, e.numpy(), r.numpy(), g.numpy())
        assert gate.passed, gate
    if n < rows:
        assert not rel_gate(
            "unmasked", BOUND, exact[1].numpy(), ref[1].numpy(), unmasked.numpy()
        ).passed


def test_subsampled_rows_are_upstreams() -> None:
    for rows in range(3, 40):
        x = torch.zeros(1, 1, rows, 9)
        conv = torch.nn.Conv2d(1, 1, 3, 2)
        assert conv(x).shape[2] == subsampled(rows)


@pytest.fixture(scope="module")
def graphs(model: Any, tmp_path_factory: Any) -> dict[str, Path]:
    _, latents, emotion = model
    out, args = (
        tmp_path_factory.mktemp("graphs"),
        (torch.zeros(1, 24, 1024), torch.ones(1, 24)),
    )
    return {
        "latents": export_static(
            latents, args, INPUTS, ("latents",), out / "speaker_latents_R24.onnx"
        ).path,
        "emo_vec": export_static(
            emotion, args, INPUTS, ("emo_vec",), out / "emotion_vector_R24.onnx"
        ).path,
    }


def test_the_exported_graphs_are_the_port(model: Any, graphs: dict[str, Path]) -> None:
    from scripts.common.build.runners import cpu_runner

    _, latents, emotion = model
    x, mask = padded(
        torch.randn(1, 17, 1024, generator=torch.Generator().manual_seed(2)), 24
    )
    feeds = {"cond": x.numpy(), "mask": mask.numpy()}
    with torch.no_grad():
        want = {
            "latents": latents(x, mask).numpy(),
            "emo_vec": emotion(x, mask).numpy(),
        }
    for name, path in graphs.items():
        got = cpu_runner(path).run(feeds)[0]
        assert np.abs(got - want[name]).max() <= 1e-5 * np.abs(want[name]).max(), name


def test_a_conformer_of_another_input_layer_is_refused(model: Any) -> None:
    with pytest.raises(
        ValueError, match="input_layer 'conv2d': the port takes IndexTTS-2's 'conv2d2'"
    ):
        MaskedConformer(
            {}, Conformer(**{**TINY["condition_module"], "input_layer": "conv2d"})
        )


@pytest.mark.simulator
def test_the_compiled_graphs_keep_the_conditionings_on_the_simulator(
    model: Any, graphs: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    x, mask = padded(
        torch.randn(1, 19, 1024, generator=torch.Generator().manual_seed(3)), 24
    )
    feeds = {"cond": x.numpy(), "mask": mask.numpy()}
    sim = Simulator()
    try:
        for name, path in graphs.items():
            reference = cpu_runner(path).run(feeds)[0]
            got = sim.runner(compile_onnx(path, tmp_path / name).bin_path).run(feeds)[0]
            (gate,) = sim_gate(name, [reference], [got], rows=False)
            assert gate.passed, gate
    finally:
        sim.close()
