"""Kaldi's log mel filterbank as torchaudio.compliance.kaldi computes it with
``fbank(wav, num_mel_bins=80, sample_frequency=16000, dither=0)`` and every
other option at its default: what two speaker encoders read, GPT-SoVITS's
``sv`` (its local copy, ``GPT_SoVITS/eres2net/kaldi.py``; docs/gpt-sovits.md,
speaker verification) and IndexTTS-2's CAM++ (which then subtracts the mean
over time itself):

25 ms frames every 10 ms with snip_edges (only whole frames), per-frame DC
removal, pre-emphasis 0.97 (the first sample repeats itself), Povey window,
FFT zero-padded to 512, power spectrum, 80 triangular mel bins from 20 Hz to
Nyquist (Kaldi's mel scale 1127 ln(1 + f/700), Nyquist bin weight 0), natural
log floored at float32 epsilon; no energy column, no mean subtraction.

Computed in float64 by the SDK's STFT and mel banks (daemon/sdk/audio/stft.py,
mel.py) and returned as float32: upstream's float32 arithmetic differs from the
exact values by its own rounding (relative error ~1e-6).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from daemon.sdk.audio.mel import floored_log, kaldi_filters
from daemon.sdk.audio.stft import POVEY, Stft, power

FBANK_RATE: Final = 16000
#: frame_length 25 ms / frame_shift 10 ms at 16 kHz
FRAME: Final = 400
SHIFT: Final = 160
#: round_to_power_of_two: the FFT length is the next power of two
PADDED: Final = 512
MEL_BINS: Final = 80
LOW_FREQ: Final = 20.0
#: high_freq 0.0 means "offset from Nyquist", i.e. Nyquist itself
HIGH_FREQ: Final = FBANK_RATE / 2
PREEMPHASIS: Final = 0.97
#: torch.finfo(torch.float).eps: the log floor (kaldi.py EPSILON)
LOG_FLOOR: Final = float(np.finfo(np.float32).eps)
#: snip_edges: no padding; remove_dc_offset; preemphasis_coefficient; povey
STFT: Final = Stft(
    PADDED, SHIFT, frame=FRAME, kind=POVEY, remove_dc=True, preemphasis=PREEMPHASIS
)


def frames_of(samples: int) -> int:
    """fbank frames of a 16 kHz clip of ``samples`` (snip_edges; 0 if shorter
    than one frame)."""
    return STFT.frames_of(samples)


def mel_banks() -> np.ndarray:
    """[MEL_BINS, PADDED // 2 + 1] triangular weights."""
    return kaldi_filters(PADDED, MEL_BINS, FBANK_RATE, LOW_FREQ, HIGH_FREQ)


def kaldi_fbank(audio16k: np.ndarray) -> np.ndarray:
    """float32 [frames, 80] log mel filterbank of a mono 16 kHz clip in [-1, 1]
    (upstream does not scale it to the int16 range)."""
    x = np.asarray(audio16k)
    if x.ndim != 1:
        raise ValueError(f"fbank: expected mono audio [n], got shape {x.shape}")
    if x.size < FRAME:
        raise ValueError(
            f"fbank: {x.size} samples is shorter than one {FRAME}-sample frame"
        )
    if not np.isfinite(x).all():
        raise ValueError("fbank: audio has NaN or infinite samples")
    energies = power(STFT(x)) @ mel_banks().T
    return floored_log(energies, LOG_FLOOR).astype(np.float32)
