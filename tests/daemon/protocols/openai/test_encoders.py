"""Response audio formats."""

from __future__ import annotations

import io
import struct
import wave

import numpy as np
import pytest
import soundfile as sf

from daemon.protocols.openai import encoders as encode
from daemon.sdk.audio.shaping import to_int16


def test_streamed_wav_header_reads_as_unknown_length():
    head = encode.wav_header(22050)
    assert len(head) == 44 and head[4:8] == head[40:44] == b"\xff\xff\xff\xff"
    pcm = np.arange(100, dtype="<i2").tobytes()
    with wave.open(io.BytesIO(head + pcm)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (22050, 1, 2)
        assert w.readframes(1000) == pcm


@pytest.mark.parametrize(
    "fmt,native,rate",
    [
        ("pcm", 22050, 24000),
        ("wav", 22050, 22050),
        ("opus", 22050, 24000),
        ("opus", 16000, 16000),
        ("mp3", 22050, 22050),
        ("flac", 32000, 32000),
    ],
)
def test_output_rate(fmt, native, rate):
    assert encode.output_rate(fmt, native) == rate


@pytest.mark.parametrize("fmt", ["flac", "mp3", "opus"])
def test_compressed_files_decode_to_the_same_length(fmt):
    if fmt not in encode.available_formats():
        pytest.skip(f"this libsndfile cannot write {fmt}")
    rate = encode.output_rate(fmt, 16000)
    t = np.arange(rate) / rate
    audio = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    out, got_rate = sf.read(io.BytesIO(encode.encode_file(fmt, audio, rate)))
    assert got_rate == rate
    assert len(out) == pytest.approx(rate, rel=0.05)
    rms = float(np.sqrt(np.mean(out[rate // 10 :] ** 2)))  # past codec warm-up
    assert rms == pytest.approx(0.3 / np.sqrt(2), rel=0.1)  # lossy, not silent


def test_a_complete_wav_carries_its_real_sizes():
    rate = 22050
    audio = (0.5 * np.sin(np.arange(1000) / 10)).astype(np.float32)
    data = encode.encode_file("wav", audio, rate)
    riff, size = struct.unpack("<I", data[4:8])[0], struct.unpack("<I", data[40:44])[0]
    assert (riff, size) == (len(data) - 8, 2000)
    with wave.open(io.BytesIO(data)) as w:
        assert (w.getnframes(), w.getframerate()) == (1000, rate)
    info = sf.info(io.BytesIO(data))
    assert (info.frames, info.samplerate) == (1000, rate)
    # The same PCM as the streamed form, and raw pcm is just that PCM.
    assert data[44:] == encode.encode_file("pcm", audio, rate) == to_int16(audio)
