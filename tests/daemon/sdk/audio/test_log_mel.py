"""LogMel's refusals (its values against upstream's mel_spectrogram are tested
where an engine configures it: tests/daemon/engines/qwen3/tts/test_xvector.py
and the IndexTTS-2 package's prompt mel)."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.sdk.audio.log_mel import LogMel
from daemon.sdk.audio.stft import Stft

STFT = Stft(1024, 256, pad=384)


def test_a_basis_of_other_bins_is_refused() -> None:
    refusal = r"mel basis is \[80, 512\], expected \[n_mels, 513\]"
    with pytest.raises(ValueError, match=refusal):
        LogMel(STFT, np.zeros((80, 512)))


def test_a_clip_within_the_padding_is_refused() -> None:
    mel = LogMel(STFT, np.ones((80, 513)))
    with pytest.raises(ValueError, match="more than 384 samples"):
        mel(np.zeros(384, np.float32))
    assert mel(np.zeros(1024, np.float32)).shape == (4, 80)
