"""The codec windows in fp16 on the HTP simulator, on an ill-conditioned tiny
codec built by upstream's classes: most codebook rows nearly unused (rows of
embedding_sum / ~1e-5), a sliding window shorter than a window, and a wave
that spends much of its time at the ±1 clamp."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import onnx
import pytest
import torch

from scripts.common.build.onnx_export import export_static
from scripts.common.parity import snr_db
from scripts.qwen3.tts import tiny_codec
from scripts.qwen3.tts.graphs import codec, codec_sim
from scripts.qwen3.tts.tiny_init import rescale_outputs

#: window sizes on the simulator (~5 s of simulator per frame on 2 cores):
#: two sizes, the larger past the sliding window
FRAMES: Final = (2, 5)
#: the ill codec's sliding window: shorter than FRAMES[-1], so the mask cuts
SLIDING: Final = 2
#: share of codebook rows made nearly unused, and their usage (the clamp of
#: upstream's EuclideanCodebook.decode is 1e-5)
DEAD_SHARE: Final = 0.5
DEAD_USAGE: Final = 1e-5
#: the last conv's output std before the clamp (the tiny codec's is 0.2)
LOUD_STD: Final = 0.6
CODEBOOK: Final = tiny_codec.DECODER_DIMS["codebook_size"]
#: the CPU graph vs upstream's float32 forward: measured 113-116 dB with and
#: without the lookup's scaling (the samples are bitwise equal: s is a power
#: of two); the tiny codec's float32 floor is ~115 dB
CPU_MIN_SNR_DB: Final = 100.0


def ill_codec(seed: int = 0) -> Any:
    """The tiny codec made ill-conditioned (module docstring), re-calibrated
    by tiny_codec's LSUV so every conv's output keeps its std."""
    c = tiny_codec.build_codec(seed)
    dec = c.decoder
    gen = torch.Generator().manual_seed(seed + 7)
    quant = dec.quantizer
    with torch.no_grad():
        for vq in (*quant.rvq_first.vq.layers, *quant.rvq_rest.vq.layers):
            usage = vq._codebook.cluster_usage
            dead = torch.rand(usage.shape, generator=gen) < DEAD_SHARE
            usage[dead] = DEAD_USAGE * (1 + torch.rand(int(dead.sum()), generator=gen))
    dec.config.sliding_window = SLIDING
    dec.pre_transformer.config.sliding_window = SLIDING
    for layer in dec.pre_transformer.layers:
        layer.self_attn.sliding_window = SLIDING
    targets = tiny_codec._conv_targets(dec)
    targets[dec.decoder[-1].conv] = LOUD_STD
    calib = (1, 16, tiny_codec.CALIBRATION_FRAMES)
    gen = torch.Generator().manual_seed(seed + 2)
    codes = torch.randint(0, CODEBOOK, calib, generator=gen)
    rescale_outputs(dec, targets, codes)
    return c


@pytest.fixture(scope="module")
def ill() -> Any:
    return ill_codec()


@pytest.fixture(scope="module")
def ill_graphs(ill: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    out = tmp_path_factory.mktemp("ill_codec")
    return {t: codec.export_codec(ill, t, out / f"codec_{t}.onnx") for t in FRAMES}


def _codes(frames: int) -> np.ndarray:
    return np.random.default_rng(frames).integers(0, CODEBOOK, (16, frames))


def test_the_ill_codec_is_ill_conditioned(ill: Any) -> None:
    """Rows past fp16's range, the mask cutting inside a window, a loud wave."""
    table = codec._table(ill.decoder.quantizer.rvq_rest.vq.layers[0])
    assert float(table.abs().max()) > codec_sim.FP16_MAX
    assert ill.decoder.pre_transformer.layers[0].self_attn.sliding_window < FRAMES[-1]
    with torch.no_grad():
        wav = ill.decoder(torch.as_tensor(_codes(16))[None]).numpy()
    assert 0.1 < float(np.mean(np.abs(wav) >= 1.0)) < 0.9


def test_the_scaled_lookup_fits_fp16_and_keeps_the_cpu_gate(
    ill: Any, ill_graphs: dict[int, Path]
) -> None:
    """The tables / s and projections · s are finite in fp16 (s a power of two,
    so the fp32 product is exact) and the windows still equal upstream."""
    from scripts.common.build.runners import cpu_runner

    deq = codec.Dequantize(ill.decoder.quantizer)
    for t in (deq.table, deq.w_first, deq.w_rest):
        assert torch.isfinite(t.half()).all()
    with torch.no_grad():
        codes = torch.as_tensor(_codes(FRAMES[-1]))[None]
        want = ill.decoder.quantizer.decode(codes)[0]
        torch.testing.assert_close(deq(codes[0]), want, rtol=1e-5, atol=1e-6)
    for t, path in ill_graphs.items():
        codes = _codes(t)
        with torch.no_grad():
            want = ill.decoder(torch.as_tensor(codes)[None]).numpy()
        got = cpu_runner(path).run({"codes": codes[None].astype(np.int32)})[0]
        assert snr_db(want, got) >= CPU_MIN_SNR_DB
        res = codec_sim.fp16_range_gate(path, CODEBOOK)
        assert res.passed, str(res)


def test_the_range_gate_names_a_table_past_fp16(ill: Any, tmp_path: Path) -> None:
    """The gate can fail: upstream's unscaled table in a lookup graph."""
    quant = ill.decoder.quantizer
    table = torch.cat([codec._table(vq) for vq in quant.rvq_rest.vq.layers])

    class Lookup(torch.nn.Module):
        def forward(self, codes: torch.Tensor) -> torch.Tensor:
            return torch.index_select(table, 0, codes.reshape(-1)).sum(0)

    path = tmp_path / "lookup.onnx"
    export_static(Lookup(), codec.window_args(ill, 2), ["codes"], ["rows"], path)
    res = codec_sim.fp16_range_gate(path, CODEBOOK)
    assert not res.passed and "fp16 range share" in res.metric, str(res)
    assert len(onnx.load(str(path)).graph.initializer) >= 1


def test_every_window_of_the_ill_codec_passes_on_the_simulator(
    ill: Any, ill_graphs: dict[int, Path], qnn_cache: Path, tmp_path: Path
) -> None:
    """Before the scaled lookup: -5.7 dB (the fp16 table held inf)."""
    pytest.importorskip("onnxruntime_qnn")
    from scripts.common.build.runners import Simulator, cpu_runner
    from scripts.common.qnn_compile import compile_onnx

    bins = {t: compile_onnx(p, tmp_path, cache_dir=qnn_cache).bin_path
            for t, p in ill_graphs.items()}  # fmt: skip
    sim = Simulator()
    try:
        results = {}
        for t in FRAMES:
            runner = sim.runner(bins[t])
            results[t] = codec_sim.sim_codec_gate(
                runner, cpu_runner(ill_graphs[t]), CODEBOOK
            )
    finally:
        sim.close()
    for t, res in results.items():
        assert [r.name for r in res] == [f"codec_{t}"] * 2
        assert all(r.passed for r in res), [str(r) for r in res]
