"""The three per-clip scores of ``scripts/eval-gptsovits`` (lower is better for all).

- breath tonality: tonal peaks inside the breaths. A breath is broadband noise;
  narrow peaks in it are heard as a buzz or hum on inhalations. Welch spectrum
  over the breath windows, excess over a 31-bin running median, summed over
  400-4000 Hz where it exceeds 6 dB.
- whine: the largest excess of the 500 Hz-multiple comb above 10 kHz that
  HiFiGAN's upsampling develops while fine-tuning on small data.
- log-mel distance: mean |log mel(a) - log mel(b)| against the recording.

The first two follow the reference port's eval_sovits_ckpts.py
(docs/board.md, parity and evaluation), whose numbers were measured on a
19-minute voice where a late epoch buzzed on every breath. Breath windows are
found on the recording and applied to the resynthesis, which is time-aligned
with it (both are 640 samples per 50 Hz latent frame).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import scipy.signal as ss

SAMPLE_RATE = 32000  # s2v2Pro.json data.sampling_rate

# Breath detection (reference port): RMS frames of 1024, pyin 70-600 Hz on
# frames of 2048, both at a 10 ms hop; a breath is unvoiced and between -50 and
# -22 dBFS (quiet but not silent) for at least 10 frames (0.1 s).
FRAME_HOP = 320
RMS_FRAME = 1024
PYIN_FRAME = 2048
PYIN_FMIN, PYIN_FMAX = 70.0, 600.0
BREATH_MIN_DB, BREATH_MAX_DB = -50.0, -22.0
BREATH_MIN_FRAMES = 10
RMS_FLOOR = 1e-6  # keeps log10 finite on digital silence

# Tonality (reference port): Welch with 2048-sample segments, 75 % overlap.
TONAL_NPERSEG, TONAL_NOVERLAP = 2048, 1536
TONAL_MEDIAN_BINS = 31
TONAL_EXCESS_DB = 6.0
TONAL_BAND_HZ = (400.0, 4000.0)

# Whine: Welch with 8192-sample segments (3.9 Hz bins), 101-bin running median.
# The reference port reads five comb lines measured on one voice (11, 13, 13.5,
# 14.5 and 15.7 kHz); we read every 500 Hz multiple above 10 kHz below Nyquist,
# each as the largest bin within +-WHINE_TOLERANCE_HZ (a line need not sit on a
# bin centre).
WHINE_NPERSEG = 8192
WHINE_MEDIAN_BINS = 101
WHINE_COMB_STEP_HZ = 500.0
WHINE_COMB_ABOVE_HZ = 10000.0
WHINE_TOLERANCE_HZ = 10.0

PSD_FLOOR = 1e-20  # keeps 10 log10 finite on silence

# Log-mel: upstream mel_processing.mel_spectrogram_torch with s2v2Pro.json's
# data section (n_fft 2048, hop 640, 128 mels, fmin 0, fmax Nyquist, Slaney
# filters) and spectral_normalize_torch's log(clamp(x, 1e-5)).
MEL_N_FFT = 2048
MEL_BINS = 128
MEL_LOG_FLOOR = 1e-5

Window = tuple[int, int]  # [start, end) in samples


def breath_windows(audio: np.ndarray, sr: int = SAMPLE_RATE) -> list[Window]:
    """Unvoiced, quiet-but-not-silent stretches of `audio` (sample ranges)."""
    import librosa

    y = np.asarray(audio, np.float32)
    if len(y) < PYIN_FRAME:
        return []
    rms = librosa.feature.rms(y=y, frame_length=RMS_FRAME, hop_length=FRAME_HOP)[0]
    _, voiced, _ = librosa.pyin(
        y,
        fmin=PYIN_FMIN,
        fmax=PYIN_FMAX,
        sr=sr,
        frame_length=PYIN_FRAME,
        hop_length=FRAME_HOP,
    )
    n = min(len(rms), len(voiced))
    db = 20 * np.log10(rms[:n] + RMS_FLOOR)
    quiet = (~voiced[:n]) & (db > BREATH_MIN_DB) & (db < BREATH_MAX_DB)
    # Runs of True: the edges of the 0/1 sequence padded with False both sides.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], quiet.astype(np.int8), [0]])))
    return [
        (int(a) * FRAME_HOP, min(int(b) * FRAME_HOP, len(y)))
        for a, b in zip(edges[::2], edges[1::2])
        if b - a >= BREATH_MIN_FRAMES
    ]


def _excess_db(psd: np.ndarray, median_bins: int) -> np.ndarray:
    """How far each bin of a power spectrum stands above its running median."""
    db = 10 * np.log10(psd + PSD_FLOOR)
    return db - ss.medfilt(db, median_bins)


def breath_tonality(
    audio: np.ndarray, windows: list[Window], sr: int = SAMPLE_RATE
) -> float:
    """Summed narrow-band excess (dB over 6 dB) in 400-4000 Hz of the mean
    spectrum of the breath windows; NaN when no window is one segment long."""
    y = np.asarray(audio, np.float64)
    segments = [y[a : min(b, len(y))] for a, b in windows]
    spectra = [
        ss.welch(s, fs=sr, nperseg=TONAL_NPERSEG, noverlap=TONAL_NOVERLAP)[1]
        for s in segments
        if len(s) >= TONAL_NPERSEG
    ]
    if not spectra:
        return float("nan")
    freqs = np.fft.rfftfreq(TONAL_NPERSEG, 1 / sr)
    excess = _excess_db(np.mean(spectra, axis=0), TONAL_MEDIAN_BINS)
    band = (freqs > TONAL_BAND_HZ[0]) & (freqs < TONAL_BAND_HZ[1])
    return float(np.clip(excess[band] - TONAL_EXCESS_DB, 0.0, None).sum())


@cache
def comb_hz(sr: int = SAMPLE_RATE) -> tuple[float, ...]:
    """The 500 Hz multiples strictly between 10 kHz and Nyquist."""
    first = int(WHINE_COMB_ABOVE_HZ // WHINE_COMB_STEP_HZ) + 1
    last = int(np.ceil(sr / 2 / WHINE_COMB_STEP_HZ)) - 1
    return tuple(k * WHINE_COMB_STEP_HZ for k in range(first, last + 1))


def whine_db(audio: np.ndarray, sr: int = SAMPLE_RATE) -> float:
    """Largest excess (dB over the 101-bin running median) at the comb lines."""
    y = np.asarray(audio, np.float64)
    if len(y) < WHINE_NPERSEG:
        raise ValueError(
            f"whine needs at least {WHINE_NPERSEG} samples "
            f"({WHINE_NPERSEG / sr:.2f} s), got {len(y)}"
        )
    freqs, psd = ss.welch(y, fs=sr, nperseg=WHINE_NPERSEG)
    excess = _excess_db(psd, WHINE_MEDIAN_BINS)
    lines = [excess[np.abs(freqs - hz) <= WHINE_TOLERANCE_HZ] for hz in comb_hz(sr)]
    return float(max(line.max() for line in lines))


@cache
def _mel_basis(sr: int) -> np.ndarray:
    import librosa

    return librosa.filters.mel(sr=sr, n_fft=MEL_N_FFT, n_mels=MEL_BINS)


def log_mel(audio: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    """log mel spectrogram [128, frames] of upstream's linear spectrogram."""
    from scripts.gptsovits.pipeline.refs import linear_spectrogram

    spec = linear_spectrogram(np.asarray(audio, np.float32))[0].numpy()
    return np.log(np.maximum(_mel_basis(sr) @ spec, MEL_LOG_FLOOR))


def log_mel_distance(
    audio: np.ndarray, recording: np.ndarray, sr: int = SAMPLE_RATE
) -> float:
    """Mean absolute log-mel difference over the frames both signals have."""
    a, b = log_mel(audio, sr), log_mel(recording, sr)
    n = min(a.shape[1], b.shape[1])
    if n == 0:
        raise ValueError("log-mel distance needs at least one 640-sample frame")
    return float(np.mean(np.abs(a[:, :n] - b[:, :n])))
