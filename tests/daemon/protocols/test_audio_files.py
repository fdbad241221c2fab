"""Uploaded audio files: real libsndfile decoding, the checks and their messages."""

from __future__ import annotations

import time

import numpy as np
import pytest

from daemon.protocols import audio_files
from daemon.protocols.audio_files import blocks, read_header, scan
from tests.daemon.protocols.audio_samples import (
    BAD_FILES,
    CAP_S,
    RATE,
    encode,
    speech,
    speech_wav,
    two_hour_flac,
)


def _read(data: bytes, cap: float = CAP_S) -> audio_files.AudioFile:
    return scan(read_header(data, cap), cap)


@pytest.mark.parametrize(
    "fmt, subtype", [("WAV", "PCM_16"), ("WAV", "FLOAT"), ("FLAC", None), ("OGG", None)]
)
def test_formats_decode_to_float32_frames_by_channels(fmt, subtype):
    audio = _read(encode(speech(channels=2), RATE, fmt, subtype))
    assert (audio.format, audio.sample_rate, audio.channels) == (fmt, RATE, 2)
    decoded = np.concatenate(list(blocks(audio)))
    assert decoded.dtype == np.float32 and decoded.shape == (audio.frames, 2)
    assert audio.frames == len(speech())
    if fmt != "OGG":  # lossless: the same samples (within 16-bit steps)
        np.testing.assert_allclose(decoded[:, 0], speech(), atol=1 / 32767)


def test_blocks_are_one_second_and_cover_the_file():
    audio = _read(speech_wav())
    sizes = [len(b) for b in blocks(audio)]
    assert sizes[:-1] == [RATE] * (len(sizes) - 1) and sum(sizes) == audio.frames


@pytest.mark.parametrize("bad", BAD_FILES, ids=[b.name for b in BAD_FILES])
def test_bad_files_are_refused_with_the_field_and_a_reason(bad):
    with pytest.raises(audio_files.BadRequest) as caught:
        _read(bad.make())
    exc = caught.value
    field = audio_files.FIELDS.get(exc.field, exc.field)  # "audio": the file's
    assert (field, exc.code) == ("file", bad.code), str(exc)
    assert bad.says in str(exc) and "expected " in str(exc), str(exc)


def test_two_hours_are_refused_from_the_header_without_decoding():
    data = two_hour_flac()
    start = time.perf_counter()
    with pytest.raises(audio_files.BadRequest, match="at most 1800 s"):
        read_header(data, CAP_S)
    assert time.perf_counter() - start < 0.1  # decoding 2 h takes seconds
    assert read_header(data, 3 * 3600).seconds == 7200  # under a higher cap: fine


def test_a_wav_streamed_with_unset_sizes_reads_to_its_end():
    data = bytearray(speech_wav())
    data[4:8] = b"\xff\xff\xff\xff"  # as our own streamed /v1/audio/speech WAV
    at = data.index(b"data") + 4
    data[at : at + 4] = b"\xff\xff\xff\xff"
    assert _read(bytes(data)).frames == len(speech())


def test_a_header_that_understates_the_length_is_caught_while_decoding():
    with pytest.raises(audio_files.BadRequest, match=r"at most 1\.5 s .*found 2\.00"):
        scan(read_header(speech_wav(), CAP_S), 1.5)


def test_silence_is_valid_audio():
    audio = _read(encode(np.zeros(RATE, np.float32), RATE))
    assert audio.frames == RATE
