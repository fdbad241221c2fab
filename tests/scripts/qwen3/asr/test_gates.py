"""The parity gates on the tiny model: CPU fp32 graphs against upstream torch,
and compiled binaries on the HTP simulator against the CPU graphs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from scripts.common import sim_gate as simgate
from scripts.qwen3.asr import export, gates
from tests.scripts.qwen3.conftest import KV

#: a 20-token prompt with 8 audio rows, then forced tokens
PROMPT, AUDIO, STEPS = 20, 8, 12
SIM_STEPS = 4


def _mel(frames: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    return (0.5 * rng.standard_normal((128, frames))).astype(np.float32)


@pytest.fixture(scope="module")
def prompt(asr_model: Any) -> tuple[np.ndarray, list[int]]:
    """Prompt embeddings (audio rows scattered at the pads) and forced tokens."""
    rng = np.random.default_rng(0)
    pad = asr_model.config.thinker_config.audio_token_id
    ids = rng.integers(0, pad, PROMPT)
    ids[5 : 5 + AUDIO] = pad
    audio = rng.standard_normal((AUDIO, 64)).astype(np.float32) * 0.05
    x = gates.prompt_embeddings(asr_model, ids, audio)
    return x, rng.integers(0, pad, STEPS).tolist()


def test_the_encoder_gate_passes_over_three_windows(
    asr_model: Any, asr_params: Any, asr_graphs: Any
) -> None:
    """987 frames = 3 windows (the last one partial, its tail chunk 87 frames),
    against upstream's windowed encoder."""
    result = gates.gate_encoder(asr_model, asr_params, asr_graphs.encoder, _mel(987))
    assert result.passed, result
    assert result.value < 1e-5


def test_the_decoder_gate_passes(
    asr_model: Any, asr_params: Any, asr_graphs: Any, prompt: Any
) -> None:
    results = gates.gate_decoder(
        asr_model, asr_params, asr_graphs.prefill, asr_graphs.decode, *prompt
    )
    assert [r.passed for r in results] == [True, True], results
    assert results[0].value < 1e-5


def test_the_decoder_gate_fails_a_wrong_graph(
    asr_model: Any, asr_params: Any, asr_graphs: Any, prompt: Any, tmp_path: Path
) -> None:
    """A decode graph of slightly different weights (one norm off by 1 %) is caught."""
    other = copy.deepcopy(asr_model)
    with torch.no_grad():
        other.thinker.model.layers[1].post_attention_layernorm.weight.mul_(1.01)
    wrong = export.export_text(other, "decode", KV, tmp_path / "wrong.onnx")
    rel, _ = gates.gate_decoder(
        asr_model, asr_params, asr_graphs.prefill, wrong, *prompt
    )
    assert not rel.passed
    assert "FAIL" in str(rel)


def test_sim_gate_thresholds() -> None:
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((6, 50)).astype(np.float32)
    cos, top1 = simgate.sim_gate(
        "g", [ref], [ref + 1e-3 * rng.standard_normal(ref.shape)]
    )
    assert cos.passed and top1.passed and top1.value == 1.0
    flipped = ref.copy()
    flipped[0] = -flipped[0]  # one row of six wrong: cosine and top-1 fall
    cos, top1 = simgate.sim_gate("g", [ref], [flipped])
    assert not cos.passed and not top1.passed
    (only_cos,) = simgate.sim_gate("g", [ref], [ref], rows=False)
    assert only_cos.passed


def test_an_argmax_miss_is_excused_only_inside_fp16_precision() -> None:
    """Logits near 13 (fp16 ulp 2**-7): best and second 1 ulp apart is a tie,
    10 ulps apart a miss."""
    ref = np.zeros((2, 8), np.float32)
    ref[:, 0] = 13.0
    ref[0, 1] = 13.0 - 2**-7
    ref[1, 1] = 13.0 - 10 * 2**-7
    test = ref.copy()
    test[:, 1] = 13.01  # the test picks index 1 in both rows
    assert simgate.top1_with_ties(ref, test) == (0.5, 1)


@pytest.mark.simulator
def test_compiled_graphs_pass_the_simulator_gates(
    asr_model: Any,
    asr_params: Any,
    asr_graphs: Any,
    prompt: Any,
    qnn_cache: Path,
    tmp_path: Path,
) -> None:
    """fp16 binaries (fp16 K/V) on the x86 HTP simulator: one encoder window and
    a prefill + a few teacher-forced steps, against the fp32 CPU graphs."""
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx

    bins = {
        name: compile_onnx(path, tmp_path, name=name, cache_dir=qnn_cache).bin_path
        for name, path in (
            ("encoder", asr_graphs.encoder),
            ("prefill", asr_graphs.prefill_npu),
            ("decode", asr_graphs.decode_npu),
        )
    }
    x, tokens = prompt
    params, steps = asr_params, tokens[:SIM_STEPS]
    mel = _mel(300)
    want_audio = gates.encode_windows(params, cpu_runner(asr_graphs.encoder), mel)
    cpu = [cpu_runner(asr_graphs.prefill), cpu_runner(asr_graphs.decode)]
    want = gates.decoder_logits(params, asr_model, *cpu, x, steps)
    sim = Simulator()
    try:
        runners = sim.open(bins)
        got_audio = gates.encode_windows(params, runners["encoder"], mel)
        sim_pair = [runners["prefill"], runners["decode"]]
        got = gates.decoder_logits(params, asr_model, *sim_pair, x, steps)
    finally:
        sim.close()
    results = simgate.sim_gate("encoder", [want_audio], [got_audio], rows=False)
    results += simgate.sim_gate("decoder", [want], [got])
    assert all(r.passed for r in results), [str(r) for r in results]
