"""Qwen3-ASR's languages and ``max_new_tokens`` through the real service: the
tiny bundle alone in ``hexvoice serve --backend cpu``, driven by the openai SDK,
the wyoming library and ``hexvoice transcribe`` as a subprocess.  A language
is taken as a code or as upstream's name in any case, refused with what is
accepted otherwise, and answered as upstream names it (daemon/text/languages.py).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import openai
import pytest
import soundfile as sf
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.event import Event

from daemon.sdk.asr import TranscriptionOptions, stream_text
from daemon.sdk.local import open_engine
from tests.daemon.conftest import ROOT, Daemon, ServiceVoice
from tests.daemon.voice_clients import bundle_name, sdk, serving, wav_bytes

RATE: Final = 16000
#: A 2 s clip: noise, as the parity tests use (the tiny model hears anything).
SECONDS: Final = 2.0
#: Fewer tokens than the tiny model decodes unasked (it runs to the bound).
FEW: Final = 3
#: The tiny bundle's bound (params max_new_tokens, upstream's 512).
BOUND: Final = 512
READ_TIMEOUT_S: Final = 60
#: Full scale of the 16-bit samples Wyoming carries (the service divides by it).
INT16_SCALE: Final = 32768


@pytest.fixture(scope="module")
def wav() -> bytes:
    rng = np.random.default_rng(7)
    return wav_bytes(0.3 * rng.standard_normal(round(SECONDS * RATE)), RATE)


@pytest.fixture(scope="module")
def pcm(wav: bytes) -> np.ndarray:
    """The clip as the service decodes it (int16 / 32768)."""
    return sf.read(io.BytesIO(wav), dtype="float32")[0]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, tiny_asr_bundle: Path) -> Iterator[Daemon]:
    name = bundle_name(tiny_asr_bundle)
    voice = ServiceVoice(tiny_asr_bundle, name, RATE, {})
    with serving(
        tmp_path_factory.mktemp("asrlang"), voice, engine={"backend": "cpu"}
    ) as d:
        yield d


@pytest.fixture(scope="module")
def model(tiny_asr_bundle: Path) -> str:
    return bundle_name(tiny_asr_bundle)


def _engine_text(bundle: Path, pcm: np.ndarray, **options: Any) -> str:
    """What the engine itself says for ``pcm`` (in this process)."""
    with open_engine(bundle, "cpu") as (engine, _):
        session = engine.open(TranscriptionOptions(**options))
        try:
            return stream_text([*session.feed(pcm, RATE), *session.finish()])
        finally:
            session.close()


@pytest.fixture(scope="module")
def english(tiny_asr_bundle: Path, pcm: np.ndarray) -> str:
    """The engine's text with English forced by its code."""
    return _engine_text(tiny_asr_bundle, pcm, language="en")


@pytest.fixture(scope="module")
def few(tiny_asr_bundle: Path, pcm: np.ndarray, english: str) -> str:
    """The same, decoding only FEW tokens: another text."""
    text = _engine_text(
        tiny_asr_bundle, pcm, language="en", extra={"max_new_tokens": FEW}
    )
    assert text != english
    return text


# --- OpenAI ------------------------------------------------------------------
def test_openai_takes_upstreams_names_and_answers_with_them(
    daemon: Daemon, model: str, wav: bytes, english: str
) -> None:
    client = sdk(daemon, timeout=READ_TIMEOUT_S)
    for spelling in ("English", "eNGLISH", "en", "en-GB"):
        out = client.audio.transcriptions.create(
            model=model,
            file=("a.wav", wav),
            language=spelling,
            response_format="verbose_json",
        )
        assert out.text == english, spelling
        assert out.language == "English"
        assert (out.model_extra or {}).get("language_code") == "en"


def test_openai_refuses_an_unknown_name_listing_what_it_takes(
    daemon: Daemon, model: str, wav: bytes
) -> None:
    client = sdk(daemon, timeout=READ_TIMEOUT_S)
    for asked in (model, "whisper-1"):  # by name, and the default model
        with pytest.raises(openai.BadRequestError) as info:
            client.audio.transcriptions.create(
                model=asked, file=("a.wav", wav), language="Klingon"
            )
        err = info.value.body
        assert isinstance(err, dict)
        assert (err["code"], err["param"]) == ("unsupported_language", "language")
        assert "'en'" in err["message"] and "'English'" in err["message"]
        assert err["message"].endswith("found 'Klingon'")


def test_openai_max_new_tokens(
    daemon: Daemon, model: str, wav: bytes, few: str
) -> None:
    client = sdk(daemon, timeout=READ_TIMEOUT_S)
    out = client.audio.transcriptions.create(
        model=model,
        file=("a.wav", wav),
        language="en",
        extra_body={"max_new_tokens": FEW},
    )
    assert out.text == few
    for bad, words in (
        ("0", "max_new_tokens: expected a positive integer, found '0'"),
        ("1.5", "found '1.5'"),
        (str(BOUND + 1), f"max_new_tokens: expected an integer in [1, {BOUND}]"),
    ):
        with pytest.raises(openai.BadRequestError) as info:
            client.audio.transcriptions.create(
                model=model, file=("a.wav", wav), extra_body={"max_new_tokens": bad}
            )
        assert words in str(info.value), bad


# --- Wyoming -----------------------------------------------------------------
async def _wyoming(d: Daemon, pcm: np.ndarray, language: str) -> list[Event]:
    samples = np.round(pcm * INT16_SCALE).astype("<i2").tobytes()
    async with AsyncClient.from_uri(d.uri) as c:
        await c.write_event(Transcribe(language=language).event())
        await c.write_event(AudioStart(RATE, 2, 1).event())
        await c.write_event(AudioChunk(RATE, 2, 1, samples).event())
        await c.write_event(AudioStop().event())
        events = []
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None, [x.type for x in events]
            events.append(e)
            if e.type in ("transcript-stop", "error"):
                return events


def test_wyoming_takes_upstreams_names_and_answers_with_them(
    daemon: Daemon, pcm: np.ndarray, english: str
) -> None:
    for spelling in ("ENGLISH", "en"):
        events = asyncio.run(_wyoming(daemon, pcm, spelling))
        start = events[0]
        assert (start.type, start.data.get("language")) == (
            "transcript-start",
            "English",
        )
        (t,) = [Transcript.from_event(e) for e in events if e.type == "transcript"]
        assert (t.text, t.language) == (english, "English"), spelling


def test_wyoming_refuses_an_unknown_name_listing_what_it_takes(
    daemon: Daemon, pcm: np.ndarray
) -> None:
    events = asyncio.run(_wyoming(daemon, pcm, "Klingon"))
    (error,) = [e for e in events if e.type == "error"]
    assert error.data["code"] == "unsupported_language"
    assert "'English'" in error.data["text"] and "'Klingon'" in error.data["text"]
    assert not [e for e in events if e.type == "transcript"]


# --- hexvoice transcribe -----------------------------------------------------
def _hexvoice(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", "transcribe", *args],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT_S,
    )


@pytest.fixture(scope="module")
def clip(tmp_path_factory, wav: bytes) -> str:
    path = tmp_path_factory.mktemp("asrclip") / "a.wav"
    path.write_bytes(wav)
    return str(path)


def test_the_cli_takes_names_and_max_new_tokens_both_ways(
    daemon: Daemon, clip: str, tiny_asr_bundle: Path, few: str
) -> None:
    asked = ["--language", "English", "--max-new-tokens", str(FEW)]
    verbose = ["--format", "verbose_json"]
    served = _hexvoice(clip, "--socket", str(daemon.http), *asked, *verbose)
    local = ["--bundle", str(tiny_asr_bundle), "--backend", "cpu"]
    alone = _hexvoice(clip, *local, *asked, *verbose)
    assert served.returncode == alone.returncode == 0, served.stderr + alone.stderr
    a, b = json.loads(served.stdout), json.loads(alone.stdout)
    assert a["text"] == b["text"] == few and a["segments"] == b["segments"]
    assert (a["language"], a["language_code"]) == ("English", "en")
    assert (b["language"], b["language_code"]) == ("English", "en")


def test_the_cli_refuses_clearly(daemon: Daemon, clip: str) -> None:
    r = _hexvoice(clip, "--socket", str(daemon.http), "--language", "Klingon")
    assert r.returncode == 1 and "found 'Klingon'" in r.stderr
    assert "'en'" in r.stderr and "'English'" in r.stderr
    assert "Traceback" not in r.stderr
    r = _hexvoice(clip, "--socket", str(daemon.http), "--max-new-tokens", "0")
    assert r.returncode == 2
    assert "--max-new-tokens: expected a positive integer, found '0'" in r.stderr
    big = str(BOUND + 1)
    r = _hexvoice(clip, "--socket", str(daemon.http), "--max-new-tokens", big)
    assert r.returncode == 1
    assert f"max_new_tokens: expected an integer in [1, {BOUND}]" in r.stderr
