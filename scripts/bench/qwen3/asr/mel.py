"""Resample + log-mel of 10 s of 44.1 kHz stereo through the engine's own
front end (daemon/sdk/asr.py ``downmix``, daemon/sdk/audio/resample.py
``Resampler``, qwen3 asr mel.py ``MelStream``), whole and fed in 100 ms chunks
(scripts/bench/qwen3/asr/engine.py)."""

from __future__ import annotations

import time
from typing import Final

import numpy as np

from daemon.engines.qwen3.asr.audio import SAMPLE_RATE, peak_scale
from daemon.engines.qwen3.asr.mel import MelStream
from daemon.engines.qwen3.asr.params import MelParams
from daemon.sdk.asr import downmix
from daemon.sdk.audio.resample import Resampler
from scripts.bench.timing import stats_ms

#: budget for the front end of a 10 s utterance (resample + log-mel)
TARGET_MEL_MS: Final = 20.0
MEL_SECONDS, MEL_RATE, MEL_CHANNELS, CHUNK_S = 10.0, 44_100, 2, 0.1
#: Whisper's front end (preprocessor_config.json: 128 mels, n_fft 400, hop 160)
MEL: Final = MelParams(128, 400, 160, SAMPLE_RATE, 100, 13, 8)


def chirp(seconds: float, rate: int, channels: int = 1, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * rate)) / rate
    x = np.sin(2 * np.pi * (200 + 300 * t) * t)[:, None]
    x = x + 0.1 * rng.standard_normal((len(t), channels))
    return (0.3 * x).astype(np.float32).squeeze()


def mel_whole(x: np.ndarray) -> list[float]:
    """Seconds of: downmix, resample, mel frames, features; then the whole's
    process CPU time (robust to a busy machine; counts BLAS threads too)."""
    c0, t = time.process_time(), [time.perf_counter()]
    mono = downmix(x)
    t.append(time.perf_counter())
    r = Resampler(MEL_RATE, SAMPLE_RATE)
    y = np.concatenate([r.push(mono), r.finish()])
    t.append(time.perf_counter())
    ms = MelStream(MEL)
    ms.push(y)
    ms.finish()
    t.append(time.perf_counter())
    scale = peak_scale(ms.peak)
    ms.features(0, ms.frames, scale, ms.log_max(scale))
    t.append(time.perf_counter())
    return [*np.diff(t), t[-1] - t[0], time.process_time() - c0]


def mel_chunked(x: np.ndarray) -> tuple[float, float, float]:
    step, worst = round(CHUNK_S * MEL_RATE), 0.0
    c0, t0 = time.process_time(), time.perf_counter()
    r, ms = Resampler(MEL_RATE, SAMPLE_RATE), MelStream(MEL)
    for i in range(0, len(x), step):
        t1 = time.perf_counter()
        ms.push(r.push(downmix(x[i : i + step])))
        worst = max(worst, time.perf_counter() - t1)
    ms.push(r.finish())
    ms.finish()
    scale = peak_scale(ms.peak)
    ms.features(0, ms.frames, scale, ms.log_max(scale))
    return time.perf_counter() - t0, worst, time.process_time() - c0


def bench_mel(repeats: int) -> None:
    x = chirp(MEL_SECONDS, MEL_RATE, MEL_CHANNELS)
    whole = [mel_whole(x) for _ in range(repeats)]
    chunked = [mel_chunked(x) for _ in range(repeats)]
    total = [w[4] for w in whole]
    print(
        f"\nresample + log-mel, {MEL_SECONDS:g} s of {MEL_RATE} Hz x {MEL_CHANNELS}"
        f" -> 16 kHz mono, {MEL.n_mels} mels ({repeats} runs; CPU = process time)"
    )
    print(f"{'':<36}{'median':>9}{'min':>9}{'max':>9}  ms")
    ok = "OK" if 1e3 * np.median(total) <= TARGET_MEL_MS else "OVER"
    rows = [
        (f"whole (target <= {TARGET_MEL_MS:g} ms: {ok})", total),
        ("  downmix (asr.downmix)", [w[0] for w in whole]),
        ("  resample (soxr HQ stream)", [w[1] for w in whole]),
        ("  mel frames (STFT, filters)", [w[2] for w in whole]),
        ("  features (scale, log, floor)", [w[3] for w in whole]),
        ("  whole, CPU time", [w[5] for w in whole]),
        ("streamed in 100 ms chunks", [c[0] for c in chunked]),
        ("  worst chunk", [c[1] for c in chunked]),
        ("  streamed, CPU time", [c[2] for c in chunked]),
    ]
    for name, values in rows:
        print(f"{name:<36}{stats_ms(values)}")
