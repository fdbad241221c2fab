"""Gates relative to upstream's own float32 floor (scripts/common/floor.py): an
ill-conditioned Qwen3-TTS codec built with upstream's classes, whose float32
decode is only ~70 dB from its float64 one, passes; a graph with one weight off
does not; the rules themselves on plain arrays."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from scripts.common import floor
from scripts.common.build.runners import cpu_runner
from scripts.qwen3.tts import tiny_codec
from scripts.qwen3.tts.graphs import export, gates
from tests.qwen3_fixtures import require_qwen_tts

FRAMES: Final = 8
#: odd widths and a sliding window shorter than the window (upstream's knobs)
DIMS: Final = dict(latent_dim=24, hidden_size=40, decoder_dim=36, codebook_dim=14,
                   intermediate_size=56, head_dim=20, sliding_window=5)  # fmt: skip
#: SnakeBeta log-frequency raised by this much: sin(x * alpha) amplifies
#: float32 rounding (measured floors 66-71 dB at +0.7, 115 dB at 0)
SNAKE_SHIFT: Final = 0.7
#: output std before the clamp: a quarter of the samples sit at +-1
OUTPUT_STD: Final = 0.9
#: codebook usage near zero (clamped at upstream's epsilon 1e-5)
USAGE: Final = 1e-4


def ill_codec(seed: int) -> Any:
    """A tiny Qwen3TTSTokenizerV2Model, built and initialised as tiny_codec's,
    then made ill-conditioned."""
    require_qwen_tts()
    up = tiny_codec.import_qwen_tts()
    cfg = up.codec_configuration.Qwen3TTSTokenizerV2Config(
        encoder_config=dict(tiny_codec.ENCODER_DIMS),
        decoder_config={**tiny_codec.DECODER_DIMS, **DIMS},
        decode_upsample_rate=tiny_codec.SAMPLES_PER_FRAME,
        encode_downsample_rate=tiny_codec.SAMPLES_PER_FRAME,
    )
    torch.manual_seed(seed)
    codec = up.codec_modeling.Qwen3TTSTokenizerV2Model(cfg).float().eval()
    dec = codec.decoder
    tiny_codec.perturb(dec, seed + 1)
    targets = tiny_codec._conv_targets(dec)
    targets[dec.decoder[-1].conv] = OUTPUT_STD
    gen = torch.Generator().manual_seed(seed + 2)
    codes = torch.randint(0, 128, (1, 16, tiny_codec.CALIBRATION_FRAMES), generator=gen)
    tiny_codec.rescale_outputs(dec, targets, codes)
    with torch.no_grad():
        for name, b in dec.named_buffers():
            if name.endswith("cluster_usage"):
                b.mul_(USAGE)
        for name, p in dec.named_parameters():
            if name.endswith(".alpha"):
                p.add_(SNAKE_SHIFT)
    return codec


def codes(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 128, (16, FRAMES))


@pytest.fixture(scope="module", params=[0, 1, 2])
def ill(request: pytest.FixtureRequest, tmp_path_factory: Any) -> tuple[Any, Path]:
    with torch.random.fork_rng():
        codec = ill_codec(request.param)
    path = tmp_path_factory.mktemp("ill") / f"codec_{FRAMES}.onnx"
    export.export_codec(codec, FRAMES, path)
    return codec, path


def test_an_ill_conditioned_codec_passes_relative_to_upstreams_floor(ill) -> None:  # type: ignore[no-untyped-def]
    codec, path = ill
    result = gates.gate_codec(codec, cpu_runner(path), codes(5))
    assert result.passed, str(result)
    # the case is real: upstream's own float32 misses a fixed 90 dB bar
    assert result.threshold + floor.FLOOR_MARGIN_DB < 90.0, str(result)
    assert "upstream float32" in result.metric


def test_a_graph_with_one_weight_tensor_off_is_refused(ill, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    codec, path = ill
    model = onnx.load(str(path))
    big = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
    w = numpy_helper.to_array(big) * np.float32(1.01)  # one tensor 1 % off
    big.CopyFrom(numpy_helper.from_array(w, big.name))
    broken = tmp_path / path.name
    onnx.save(model, str(broken))
    result = gates.gate_codec(codec, cpu_runner(broken), codes(5))
    assert not result.passed, str(result)


def test_float64_round_trip_is_exact() -> None:
    lin = torch.nn.Linear(3, 2)
    before = [p.detach().clone() for p in lin.parameters()]
    with floor.in_float64(lin):
        assert lin.weight.dtype == torch.float64
    assert all(torch.equal(a, b) for a, b in zip(before, lin.parameters()))
    assert lin.weight.dtype == torch.float32


def test_a_fixed_snr_bar_only_widens() -> None:
    rng = np.random.default_rng(0)
    exact = rng.standard_normal(4000)
    up = exact + 1e-6 * rng.standard_normal(4000)  # ~120 dB
    got = exact + 1e-4 * rng.standard_normal(4000)  # ~80 dB
    assert not floor.snr_gate("g", "w", exact, up, got).passed  # 117 dB asked
    widened = floor.snr_gate("g", "w", exact, up, got, bound=75.0)
    assert widened.passed and widened.threshold == 75.0
    worse = exact + 1e-3 * rng.standard_normal(4000)  # ~60 dB: below both
    assert not floor.snr_gate("g", "w", exact, up, worse, bound=75.0).passed


def test_an_argmax_miss_inside_upstreams_own_error_is_a_tie() -> None:
    """Row 0's best two are 1e-4 apart, upstream float32 errs by 1e-3 there:
    the graph's other pick is a tie; row 1's pick is 1.0 off: a miss."""
    exact = np.zeros((2, 5))
    exact[:, 0], exact[0, 1], exact[1, 1] = 2.0, 2.0 - 1e-4, 1.0
    up = exact.copy()
    up[:, 4] += 1e-3
    got = exact.copy()
    got[0, 1] = 2.1
    tie = floor.argmax_gate("g", exact, up, got)
    assert tie.passed and tie.value == 1.0 and tie.threshold == 1.0
    got[1, 1] = 2.1
    assert floor.argmax_gate("g", exact, up, got).value == 0.5


def test_index_agreement_is_bound_by_upstreams() -> None:
    exact = np.array([3, 1, 4, 1, 5])
    up = np.array([3, 1, 4, 1, 9])  # upstream float32 flips one
    assert floor.index_gate("t", "tokens", exact, up, up).passed
    assert floor.index_gate("t", "tokens", exact, up, exact).value == 1.0
    refused = floor.index_gate("t", "tokens", exact, up, [3, 1, 0, 0, 5])
    assert not refused.passed and refused.threshold == 0.8
