"""A reference clip prepared as upstream's TTS.py does: librosa's resampler
(soxr HQ + fix_length) for HuBERT's copy, the 3..10 s rule on it, the peak
limit (the torchaudio copies: test_clone_upstream.py)."""

from __future__ import annotations

import numpy as np
import pytest

from daemon.engines.gptsovits.reference import audio


def tone(seconds: float, rate: int, amp: float = 0.5) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (amp * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def test_resample_is_librosas():
    librosa = pytest.importorskip("librosa")
    x = tone(3.3, 44100)
    ours = audio.resample(x, 44100, 16000)
    theirs = librosa.resample(x, orig_sr=44100, target_sr=16000, res_type="soxr_hq")
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert audio.resample(x, 44100, 44100) is x  # nothing to do: no copy


def test_prepare_gives_each_graph_its_rate():
    clip = audio.prepare(tone(4.0, 22050), 22050)
    assert len(clip.hubert16k) == 64000 and clip.seconds == pytest.approx(4.0)
    assert len(clip.spec32k) == 128000 and len(clip.sv16k) == 64000


def test_a_loud_clip_is_peak_limited_as_upstream():
    loud = audio.prepare(tone(4.0, 32000, amp=1.5), 32000)
    assert np.abs(loud.spec32k).max() == pytest.approx(1.0, abs=1e-6)
    louder = audio.prepare(tone(4.0, 32000, amp=3.0), 32000)  # ÷ min(2, peak)
    assert np.abs(louder.spec32k).max() == pytest.approx(1.5, abs=1e-6)


@pytest.mark.parametrize(
    ("pcm", "rate", "words"),
    [
        (tone(2.9, 16000), 16000, "2.90 s; a reference must be 3-10 s"),
        (tone(10.1, 48000), 48000, "10.10 s; a reference must be 3-10 s"),
        ((tone(4, 16000) * 32767).astype(np.int16), 16000, "float mono"),
        (np.full(64000, np.nan, np.float32), 16000, "64000 NaN/inf"),
        (tone(4, 16000), 1000, "expected 8000..192000 Hz"),
        (tone(4, 16000), True, "not an integer"),
        (np.stack([tone(4, 16000)] * 2, 1), 16000, "float mono"),
    ],
)
def test_unusable_clips_are_refused_clearly(pcm, rate, words):
    with pytest.raises(ValueError, match="the clip: ") as e:
        audio.prepare(pcm, rate)
    assert words in str(e.value)


def test_aux_clips_are_held_to_the_clip_bounds():
    aux = audio.prepare_aux(tone(3.0, 16000), 16000, "aux clip 0")
    assert len(aux.spec32k) == 96000 and aux.hubert16k.size == 0
    for seconds in (2.5, 10.5):
        with pytest.raises(ValueError, match=f"aux clip 1: {seconds:.2f} s; an aux"):
            audio.prepare_aux(tone(seconds, 16000), 16000, "aux clip 1")
