"""The w8a16 code predictor (scripts/qwen3/tts/quant.py) on the tiny CustomVoice
checkpoint: calibration feeds recorded from cp_step driven over upstream's
greedy frames, the QDQ model's weights in 8 bits, its CPU argmax close to
fp32's, and (simulator) it compiles for the HTP and keeps most top-1."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

#: frames of upstream's greedy run the feeds and the checks use
FRAMES: Final = 6
#: w8a16 teacher-forced argmax vs fp32 (measured 97.8 % on the simulator over
#: 90 tokens; tiny random weights have small margins)
MIN_TOP1: Final = 0.85


class _Replay:
    """cp_step teacher-forced over frames with a runner's ``run`` (upstream's
    rows: past_hidden, C(code0), then cp_table[s-2](code_{s-1}))."""

    def __init__(self, model: Any) -> None:
        from daemon.sdk.ar.rope import rope_tables
        from scripts.qwen3.tts.graphs import predictor

        self.dims = predictor.predictor_stack(model).dims
        self.g = predictor.groups(model)
        rope = predictor.predictor_rope(model)
        self.cos, self.sin = rope_tables(
            self.dims.head_dim, rope.theta, rope.attention_scaling, self.g
        )
        cp = predictor.predictor_of(model)
        self.tables = [e.weight.detach().numpy() for e in cp.model.codec_embedding]
        self.codec = model.talker.model.codec_embedding.weight.detach().numpy()

    def logits(
        self, run: Any, kv_dtype: Any, h: np.ndarray, codes: np.ndarray
    ) -> np.ndarray:
        d, g = self.dims, self.g
        out = []
        for hidden, frame in zip(h, codes):
            k = np.zeros((d.layers, d.kv_heads, g, d.head_dim), kv_dtype)
            v = k.copy()
            rows = []
            for s in range(g):
                if s == 0:
                    x = hidden
                elif s == 1:
                    x = self.codec[frame[0]]
                else:
                    x = self.tables[s - 2][frame[s - 1]]
                mask = np.full((1, 1, 1, g), -100.0, np.float32)
                mask[..., :s] = 0.0
                feed = {
                    "x": x.reshape(1, 1, -1).astype(np.float32),
                    "k_cache": k, "v_cache": v, "mask": mask,
                    "cos": self.cos[s].reshape(1, 1, -1),
                    "sin": self.sin[s].reshape(1, 1, -1),
                    "head": np.array([max(s - 1, 0)], np.int32),
                }  # fmt: skip
                logits, k_new, v_new = run(feed)
                k[:, :, s], v[:, :, s] = k_new[:, :, 0], v_new[:, :, 0]
                if s:
                    rows.append(np.asarray(logits[0], np.float32))
            out.append(rows)
        return np.array(out)


@pytest.fixture(scope="module")
def upstream(tiny_tts_custom: Path) -> Any:
    from scripts.qwen3.tts import oracle

    return oracle.load(tiny_tts_custom)


@pytest.fixture(scope="module")
def frames(upstream: Any) -> tuple[np.ndarray, np.ndarray]:
    """(past_hidden [n, Ht], codes [n, 16]) of upstream's greedy run (hooked)."""
    from scripts.qwen3.tts import oracle, tiny

    hidden: list[np.ndarray] = []

    def hook(_m: Any, _args: Any, kwargs: Any) -> None:
        e = kwargs.get("inputs_embeds")
        if e is not None and e.shape[1] == 2:  # the frame's 2-row prefill
            hidden.append(e[0, 0].detach().numpy().copy())

    cp = upstream.model.talker.code_predictor
    handle = cp.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        run = oracle.greedy(upstream, tiny.TEXTS["mixed"], "auto", "serena",
                            max_new_tokens=FRAMES + 1)  # fmt: skip
    finally:
        handle.remove()
    assert len(run.codes) == FRAMES and len(hidden) >= FRAMES
    return np.array(hidden[:FRAMES]), run.codes


@pytest.fixture(scope="module")
def quantized(upstream: Any, frames: Any, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import torch

    from scripts.common.build.runners import cpu_runner
    from scripts.qwen3.tts import quant
    from scripts.qwen3.tts.graphs import predictor

    model, d = upstream.model, tmp_path_factory.mktemp("quant")
    fp32 = predictor.export_cp_step(model, d / "cp_step_f32.onnx")
    fp16kv = predictor.export_cp_step(model, d / "cp_step.onnx", torch.float16)
    replay = _Replay(model)
    recorder = quant.FeedRecorder(cpu_runner(fp16kv))
    replay.logits(recorder.run, np.float16, *frames)
    out = quant.quantize_cp_step(fp16kv, recorder.feeds, d / "cp_step_w8a16.onnx")
    return {"fp32": fp32, "fp16kv": fp16kv, "w8a16": out, "replay": replay,
            "feeds": recorder.feeds}  # fmt: skip


def test_feed_recorder_records_runs_and_bound_executes(quantized: Any) -> None:
    from scripts.common.build.runners import cpu_runner
    from scripts.qwen3.tts.quant import FeedRecorder

    feeds = quantized["feeds"]
    assert len(feeds) == FRAMES * 16 and set(feeds[0]) >= {"x", "k_cache", "head"}
    # bind + execute, as the engine's BoundGraph drives a runner
    rec = FeedRecorder(cpu_runner(quantized["fp16kv"]))
    bound = {k: np.array(v) for k, v in feeds[1].items()}
    for name, array in bound.items():
        rec.bind(name, array)
    for value in (1.0, 2.0):
        bound["x"][...] = value
        rec.execute()
    assert [float(f["x"].flat[0]) for f in rec.feeds] == [1.0, 2.0]  # copies
    assert set(rec.feeds[0]) == set(feeds[0])


def test_weights_are_8_bit(quantized: Any) -> None:
    from scripts.qwen3.tts.quant import gathered_weights, weight_bytes

    before, after = weight_bytes(quantized["fp16kv"]), weight_bytes(quantized["w8a16"])
    print(f"\nweight bytes: fp32 ONNX {before}, w8a16 QDQ {after}")
    assert gathered_weights(quantized["fp16kv"])  # the stacked heads
    assert after.get("uint8", 0) > 0.9 * before["float"] / 4  # the weights, 1 B each
    assert after.get("float", 0) < 0.05 * before["float"]
    assert after.get("uint16", 0) < 0.01 * after["uint8"]  # heads are not 16-bit


def test_qdq_argmax_stays_close_to_fp32_on_the_cpu(quantized: Any, frames: Any) -> None:
    import onnxruntime as ort

    replay = quantized["replay"]
    runs = {}
    for name in ("fp32", "w8a16"):
        sess = ort.InferenceSession(
            str(quantized[name]), providers=["CPUExecutionProvider"]
        )
        dtype = np.float32 if name == "fp32" else np.float16
        runs[name] = replay.logits(lambda f, s=sess: s.run(None, f), dtype, *frames)
    ref, got = runs["fp32"], runs["w8a16"]
    # the fp32 replay is upstream's greedy choice: the feeds are the real ones
    np.testing.assert_array_equal(ref.argmax(-1), frames[1][:, 1:])
    top1 = float((ref.argmax(-1) == got.argmax(-1)).mean())
    rel = float(np.abs(got - ref).max() / np.abs(ref).max())
    n = ref[..., 0].size
    print(f"\nw8a16 QDQ on ORT CPU vs fp32: top-1 {top1:.3f} over {n}, rel {rel:.3g}")
    assert top1 >= MIN_TOP1
    assert rel < 0.1


@pytest.mark.simulator
def test_w8a16_compiles_for_the_htp(
    quantized: Any, frames: Any, qnn_cache: Path
) -> None:
    pytest.importorskip("onnxruntime_qnn")
    import onnxruntime as ort

    from scripts.common.qnn_compile import compile_onnx, qnn_session

    out = quantized["w8a16"].parent / "bins"
    c = compile_onnx(quantized["w8a16"], out, name="cp_w8a16", cache_dir=qnn_cache)
    sim = qnn_session(c.ctx_onnx_path)
    cpu = ort.InferenceSession(
        str(quantized["fp32"]), providers=["CPUExecutionProvider"]
    )
    replay, n = quantized["replay"], 2  # simulator: 2 frames (32 calls)
    h, codes = frames[0][:n], frames[1][:n]
    ref = replay.logits(lambda f: cpu.run(None, f), np.float32, h, codes)
    got = replay.logits(lambda f: sim.run(None, f), np.float16, h, codes)
    top1 = float((ref.argmax(-1) == got.argmax(-1)).mean())
    print(f"\nw8a16 cp_step on the simulator: {c.bin_path.stat().st_size:,} B, "
          f"top-1 vs fp32 {top1:.3f} over {ref[..., 0].size}")  # fmt: skip
    assert top1 >= MIN_TOP1
