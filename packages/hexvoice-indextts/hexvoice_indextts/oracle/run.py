"""Run upstream's own ``IndexTTS2(...).infer(...)`` on a MODEL_DIR, seeded, and
return its int16 audio: the parity oracle of the port.

Upstream reads the hub location when huggingface_hub and transformers are
imported (their constants), so ``infer_int16`` must run in a process whose
HF_HOME / HF_HUB_OFFLINE were set before those imports: ``hub_env`` gives them,
and ``infer_int16_subprocess`` runs the whole call in a fresh interpreter
(``python -m hexvoice_indextts.oracle.run``), which also keeps upstream's global
state (torch's RNG and threads, loaded modules) out of the caller.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Final

import numpy as np

#: Upstream's output rate (infer_v2.infer_generator: sampling_rate = 22050).
OUT_RATE: Final = 22050
#: A short speaker clip at an odd rate and length: upstream resamples it to
#: 22050 and 16000 Hz (infer_v2._get_speaker_conditioning), neither a divisor.
CLIP_RATE: Final = 44100
CLIP_SECONDS: Final = 0.83
#: Mel tokens the GPT may generate. Upstream's default is 1500; a random GPT
#: rarely emits the stop token, so tiny runs bound it to stay fast.
TINY_MEL_TOKENS: Final = 23
TEXT: Final = "Hello world, this is a tiny voice."
#: infer's max_text_tokens_per_segment default
SEGMENT_PIECES: Final = 120


def hub_env(hf_home: Path) -> dict[str, str]:
    """The environment upstream needs to load the tiny hub models offline."""
    return {
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }


def write_clip(path: Path, seed: int = 0) -> Path:
    """A CLIP_SECONDS chirp-plus-noise WAV at CLIP_RATE (16-bit PCM)."""
    import soundfile as sf

    n = round(CLIP_SECONDS * CLIP_RATE)
    t = np.arange(n) / CLIP_RATE
    rng = np.random.default_rng(seed)
    wave = 0.4 * np.sin(2 * np.pi * (180 + 900 * t) * t)
    wave += 0.05 * rng.standard_normal(n)
    sf.write(path, wave.astype(np.float32), CLIP_RATE, subtype="PCM_16")
    return path


def seed_all(seed: int) -> None:
    """Seed every RNG upstream may draw from: torch (the GPT's beam sampling
    and the flow matching's one torch.randn of its starting noise), Python's
    random (use_random's matrix rows, not drawn by default) and NumPy."""
    import torch

    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


def load(model_dir: Path) -> object:
    """IndexTTS2 on CPU in fp32, English text normalisation (nemo's en grammar
    only: zh is a slow first build and the tiny text is English)."""
    missing = [k for k in ("HF_HOME", "HF_HUB_OFFLINE") if k not in os.environ]
    if missing:
        raise RuntimeError(f"set {missing} before importing upstream (hub_env)")
    from indextts.infer_v2 import IndexTTS2

    return IndexTTS2(model_dir=str(model_dir), device="cpu", language="en")


def infer_int16(
    tts: object,
    clip: Path,
    text: str = TEXT,
    seed: int = 0,
    max_mel_tokens: int = TINY_MEL_TOKENS,
    segment_pieces: int = SEGMENT_PIECES,
) -> tuple[int, np.ndarray]:
    """Upstream's rate and int16 output (samples, 1) for ``text`` in ``clip``'s
    voice.

    Upstream caches the speaker and emotion conditioning per prompt path: the
    cache is cleared first, so every call runs the whole pipeline, as a port's
    run does. (The conditioning draws no random numbers with transformers 5 in
    eval mode, so a cached call would give the same bytes; this does not rely
    on it.)"""
    tts._init_cache()  # type: ignore[attr-defined]
    seed_all(seed)
    rate, wav = tts.infer(  # type: ignore[attr-defined]
        str(clip),
        text,
        output_path=None,
        max_mel_tokens=max_mel_tokens,
        max_text_tokens_per_segment=segment_pieces,
    )
    return int(rate), np.ascontiguousarray(wav)


def infer_int16_subprocess(
    model_dir: Path,
    hf_home: Path,
    clip: Path,
    text: str = TEXT,
    seed: int = 0,
    max_mel_tokens: int = TINY_MEL_TOKENS,
    config_reads: Path | None = None,
) -> tuple[int, np.ndarray]:
    """infer_int16 in a fresh interpreter with hub_env(hf_home) set; with
    ``config_reads``, the config keys upstream read while loading are written
    there (a JSON list, see config_reads.recording)."""
    rate, wavs = infer_int16_runs(
        model_dir, hf_home, clip, text, seed, max_mel_tokens, 1, config_reads
    )
    return rate, wavs[0]


def infer_int16_runs(
    model_dir: Path,
    hf_home: Path,
    clip: Path,
    text: str = TEXT,
    seed: int = 0,
    max_mel_tokens: int = TINY_MEL_TOKENS,
    repeat: int = 1,
    config_reads: Path | None = None,
    threads: int | None = None,
    trace: dict[str, np.ndarray] | None = None,
    more: tuple[str, ...] = (),
    segment_pieces: int = SEGMENT_PIECES,
) -> tuple[int, list[np.ndarray]]:
    """``repeat`` infer_int16 calls after one load, in a fresh interpreter,
    then one per text in ``more`` with ``segment_pieces`` (each seeded with
    ``seed``; their audio follows the repeats' in the list); ``threads`` caps
    its torch (OpenMP) threads, for runs side by side; ``trace`` (a dict)
    receives what the first call computed on the way (oracle/trace.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.npz"
        cmd = [sys.executable, "-m", "hexvoice_indextts.oracle.run"]
        cmd += [str(model_dir), str(clip), str(out), "--text", text]
        cmd += ["--seed", str(seed), "--max-mel-tokens", str(max_mel_tokens)]
        cmd += ["--repeat", str(repeat)] + (["--trace"] if trace is not None else [])
        cmd += [f"--more={t}" for t in more] + [f"--segment-pieces={segment_pieces}"]
        if config_reads is not None:
            cmd += ["--config-reads", str(config_reads)]
        env = {**os.environ, **hub_env(hf_home)}
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            tail = done.stderr[-4000:]
            raise RuntimeError(f"upstream failed ({done.returncode}):\n{tail}")
        with np.load(out) as saved:
            if trace is not None:
                trace.update({k[6:]: saved[k] for k in saved if k.startswith("trace_")})
            count = repeat + len(more)
            return int(saved["rate"]), [saved[f"wav{i}"] for i in range(count)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir", type=Path)
    p.add_argument("clip", type=Path)
    p.add_argument("out", type=Path, help="np.savez of rate, wav0, wav1, ...")
    p.add_argument("--text", default=TEXT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-mel-tokens", type=int, default=TINY_MEL_TOKENS)
    p.add_argument("--repeat", type=int, default=1, help="infer this many times")
    p.add_argument("--config-reads", type=Path, help="write the config keys read here")
    p.add_argument("--trace", action="store_true", help="save upstream's stages too")
    p.add_argument("--more", action="append", default=[], help="one more text to infer")
    p.add_argument("--segment-pieces", type=int, default=SEGMENT_PIECES)
    a = p.parse_args(argv)
    import json
    import time

    from hexvoice_indextts.oracle.config_reads import recording

    t0 = time.perf_counter()
    with recording() as reads:
        tts = load(a.model_dir)
    if a.config_reads is not None:
        a.config_reads.write_text(json.dumps(sorted(reads), indent=1))
    print(f"load {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    from hexvoice_indextts.oracle.trace import tracing

    wavs: dict[str, np.ndarray] = {}
    for i in range(a.repeat):
        t0 = time.perf_counter()
        with tracing(tts) if a.trace and i == 0 else nullcontext({}) as trace:
            rate, wavs[f"wav{i}"] = infer_int16(
                tts, a.clip, a.text, a.seed, a.max_mel_tokens
            )
        wavs.update({f"trace_{k}": v for k, v in trace.items()})
        print(f"infer {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    for i, text in enumerate(a.more, start=a.repeat):
        rate, wavs[f"wav{i}"] = infer_int16(
            tts, a.clip, text, a.seed, a.max_mel_tokens, a.segment_pieces
        )
    with a.out.open("wb") as f:  # a path without .npz: savez would append it
        np.savez(f, rate=rate, **wavs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
