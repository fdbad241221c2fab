"""codec_<T> (fp32 ONNX on the CPU backend) against upstream's decoder forward."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import onnx
import torch

from scripts.common.build.runners import cpu_runner
from scripts.common.parity import snr_db
from scripts.qwen3.tts.graphs import codec, gates
from tests.scripts.qwen3.tts.conftest import CODEC_FRAMES

#: the rewritten pre-transformer against upstream's (float32 both; the tiny
#: codec's own float32 floor is 115 dB)
MIN_SNR_DB = 90.0


def _codes(model: Any, frames: int, seed: int) -> np.ndarray:
    bins = codec.decoder_of(model).config.codebook_size
    return np.random.default_rng(seed).integers(0, bins, (16, frames))


def test_codec_windows_pass_the_cpu_gate_at_two_lengths(
    tts_codec: Any, codec_graphs: dict[int, Any]
) -> None:
    for t in CODEC_FRAMES:
        result = gates.gate_codec(
            tts_codec, cpu_runner(codec_graphs[t]), _codes(tts_codec, t, t)
        )
        assert result.passed, str(result)


def test_right_padding_leaves_the_valid_prefix_unchanged(
    tts_codec: Any, codec_graphs: dict[int, Any]
) -> None:
    """A partial window runs in the full window's graph: its n frames' samples
    do not depend on what pads the rest (causal), and match upstream."""
    t = max(CODEC_FRAMES)
    n, spf = t - 5, codec.samples_per_frame(tts_codec)
    runner = cpu_runner(codec_graphs[t])
    codes = _codes(tts_codec, t, 3).astype(np.int32)
    other = codes.copy()
    other[:, n:] = _codes(tts_codec, t - n, 4)
    a = runner.run({"codes": codes[None]})[0][..., : n * spf]
    b = runner.run({"codes": other[None]})[0][..., : n * spf]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert gates.gate_codec(tts_codec, runner, codes[:, :n]).passed
    # audio, not ~0 (docs/qwen3.md, export findings: the init pitfall)
    assert np.abs(a).std() > 0.01


def test_snake_is_folded_and_squares_without_pow(codec_graphs: dict[int, Any]) -> None:
    """s·s, never Pow(sin, 2); exp(α), 1/(exp β + ε) constants.

    docs/qwen3.md, export findings.
    """
    nodes = onnx.load(str(codec_graphs[min(CODEC_FRAMES)])).graph.node
    ops = [n.op_type for n in nodes]
    assert "Pow" not in ops and "Sin" in ops
    assert "Exp" not in ops and "Reciprocal" not in ops
    assert "Gather" in ops  # the in-graph codebook lookup


def test_folded_snake_equals_upstream_snakebeta(tts_codec: Any) -> None:
    snake = codec.decoder_of(tts_codec).decoder[-2]
    assert type(snake).__name__ == "SnakeBeta"
    x = torch.randn(1, snake.alpha.shape[0], 50) * 3
    with torch.no_grad():
        torch.testing.assert_close(
            codec.FoldedSnake(snake)(x), snake(x), rtol=1e-5, atol=1e-6
        )


def test_sliding_window_from_position_zero_equals_upstream(tts_codec: Any) -> None:
    """The pre-transformer's window mask and per-call positions against
    upstream's, with the window shortened to 3 so 12 rows cross it; and the
    window matters: the full window gives other rows."""
    short = copy.deepcopy(codec.decoder_of(tts_codec).pre_transformer)
    short.config.sliding_window = 3
    for layer in short.layers:
        layer.self_attn.sliding_window = 3
    x = torch.randn(
        1, 12, short.input_proj.in_features, generator=torch.Generator().manual_seed(0)
    )
    full = codec.decoder_of(tts_codec).pre_transformer
    with torch.no_grad():
        want = short(inputs_embeds=x).last_hidden_state[0].numpy()
        got = codec.SlidingTransformer(short, 12)(x[0]).numpy()
        wide = codec.SlidingTransformer(full, 12)(x[0]).numpy()
    assert snr_db(want, got) >= MIN_SNR_DB
    assert snr_db(want, wide) < 60


def test_codec_gate_fails_for_another_codec(
    tts_codec: Any, codec_graphs: dict[int, Any]
) -> None:
    """The gate can fail: the graph against a codec with one SnakeBeta changed."""
    other = copy.deepcopy(codec.decoder_of(tts_codec))
    with torch.no_grad():
        other.decoder[-2].alpha.add_(0.5)
    t = min(CODEC_FRAMES)
    result = gates.gate_codec(
        other, cpu_runner(codec_graphs[t]), _codes(tts_codec, t, 9)
    )
    assert not result.passed, str(result)
