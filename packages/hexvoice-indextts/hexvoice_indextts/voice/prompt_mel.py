"""The speaker clip's mel at 22.05 kHz (upstream's ``ref_mel``: the prompt
frames the CFM continues from, and the prompt condition's length), by the
SDK's LogMel (daemon/sdk/audio/log_mel.py): upstream's
``s2mel/modules/audio.mel_spectrogram`` with config.yaml's
``s2mel.preprocess_params``.

Upstream's fmax quirk (infer_v2): ``spect_params.fmax`` is compared with the
string "None": that gives no upper edge (Nyquist), anything else 8000 Hz.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from daemon.sdk.audio.log_mel import LogMel
from daemon.sdk.audio.mel import slaney_filters
from daemon.sdk.audio.stft import PERIODIC_HANN, Stft

from hexvoice_indextts.model_dir.config import Preprocess

#: infer_v2's upper mel edge when config.yaml's fmax is not the string "None"
QUIRK_FMAX: Final = 8000.0
NO_FMAX: Final = "None"


def fmax_of(p: Preprocess) -> float:
    return p.sr / 2 if p.spect_params.fmax == NO_FMAX else QUIRK_FMAX


def mel_basis(p: Preprocess) -> np.ndarray:
    """float32 [n_mels, n_fft / 2 + 1]: librosa's slaney mel filters (a bundle
    table; upstream casts its basis to float32 too)."""
    s = p.spect_params
    bank = slaney_filters(s.n_fft, s.n_mels, p.sr, s.fmin, fmax_of(p))
    return bank.T.astype(np.float32)


def prompt_mel(p: Preprocess, basis: np.ndarray) -> LogMel:
    """The front end: float32 samples at ``p.sr`` -> log-mel [frames, n_mels]."""
    s = p.spect_params
    pad = (s.n_fft - s.hop_length) // 2
    stft = Stft(s.n_fft, s.hop_length, pad=pad, win=s.win_length, kind=PERIODIC_HANN)
    return LogMel(stft, basis)
