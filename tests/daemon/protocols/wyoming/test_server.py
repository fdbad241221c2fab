"""Wyoming over a real Unix socket, driven by the ``wyoming`` library's client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from daemon.protocols.wyoming.playback import SAMPLE_WIDTH, SAMPLES_PER_CHUNK
from daemon.protocols.wyoming.server import FALLBACK_URL
from daemon.sdk.audio.shaping import SENTENCE_PAUSE_S
from tests.daemon.conftest import LONG_WORDS, Daemon, words
from tests.daemon.protocols.wyoming.events import connect, describe, until

READ_TIMEOUT_S = 30
#: A fresh interpreter importing the server module: seconds, with margin.
IMPORT_TIMEOUT_S = 60
#: A homepage no real install states, to tell metadata from the fallback.
OTHER_URL = "https://example.org/hexvoice-fork"


@pytest.fixture(scope="module")
def daemon(daemon_factory) -> Daemon:
    return daemon_factory("wy", limits={"max_input_chars": 50_000})


def _run(coro):  # noqa: ANN001, ANN202
    return asyncio.run(coro)


def test_describe_lists_voices_and_streaming(daemon: Daemon, test_voice):
    info = _run(describe(daemon, READ_TIMEOUT_S))
    (program,) = info.tts
    assert program.name == "hexvoice" and program.installed
    assert program.supports_synthesize_streaming is True
    home = _metadata_homepage()
    assert home, "hexvoice's metadata has no Homepage: reinstall (scripts/_venv.sh)"
    assert (program.attribution.name, program.attribution.url) == ("hexvoice", home)
    (voice,) = program.voices
    assert voice.attribution == program.attribution  # the engine names none
    assert voice.name == test_voice.name
    assert voice.languages == ["en_US"]
    assert [s.name for s in voice.speakers] == ["0", "1"]


def _metadata_homepage() -> str | None:
    """hexvoice's Homepage as the installed metadata states it, read here."""
    for entry in metadata.metadata("hexvoice").get_all("Project-URL") or ():
        label, _, url = entry.partition(",")
        if label.strip().lower() == "homepage":
            return url.strip()
    return None


def _project_url_given(tmp_path: Path, headers: str) -> str:
    """project_url() in a fresh interpreter that finds, first on its path, a
    hexvoice dist-info whose METADATA carries these extra headers."""
    info = tmp_path / "hexvoice-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: hexvoice\nVersion: 0.1.0\n{headers}"
    )
    code = "from daemon.protocols.wyoming import server; print(server.project_url())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=IMPORT_TIMEOUT_S,
        check=True,
    )
    return out.stdout.strip()


def test_project_url_is_the_metadata_homepage(tmp_path: Path):
    urls = (f"Source, {OTHER_URL}/src", f"Homepage, {OTHER_URL}")
    headers = "".join(f"Project-URL: {u}\n" for u in urls)
    assert _project_url_given(tmp_path, headers) == OTHER_URL


def test_project_url_falls_back_without_a_homepage(tmp_path: Path):
    assert _project_url_given(tmp_path, "") == FALLBACK_URL


def test_socket_mode_is_0660(daemon: Daemon):
    for path in (daemon.wyoming, daemon.http):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o660


def test_synthesize_gives_exactly_one_audio_cycle(daemon: Daemon, test_voice):
    text = "one two three four five"

    async def go() -> list[Event]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Synthesize(text, SynthesizeVoice(test_voice.name)).event())
        events = await until(c, "audio-stop", "error")
        # Nothing else follows the cycle.
        await c.write_event(Ping("after").event())
        events += await until(c, "pong")
        await c.disconnect()
        return events

    events = _run(go())
    types = [e.type for e in events]
    assert types[0] == "audio-start" and types.count("audio-start") == 1
    assert types.count("audio-stop") == 1 and types[-2:] == ["audio-stop", "pong"]
    start = AudioStart.from_event(events[0])
    assert (start.rate, start.width, start.channels) == (test_voice.sample_rate, 2, 1)
    chunks = [AudioChunk.from_event(e) for e in events if e.type == "audio-chunk"]
    pcm = b"".join(c.audio for c in chunks)
    assert len(pcm) > 0.5 * test_voice.sample_rate * 2  # 5 words ≈ 0.6 s
    # timestamps (ms) grow with the audio sent
    assert chunks[0].timestamp == 0 and chunks[-1].timestamp > 400
    assert AudioStop.from_event(events[-2]).timestamp >= chunks[-1].timestamp


def test_same_text_same_audio(daemon: Daemon):
    async def once() -> bytes:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Synthesize("repeatable audio please").event())
        ev = await until(c, "audio-stop")
        await c.disconnect()
        return b"".join(e.payload or b"" for e in ev if e.type == "audio-chunk")

    assert _run(once()) == _run(once())


def test_streaming_one_cycle_per_sentence_then_stopped(daemon: Daemon):
    async def go() -> list[str]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(SynthesizeStart().event())
        for piece in ("One two", " three. Four", " five! ", "Six seven"):
            await c.write_event(SynthesizeChunk(piece).event())
        # The backward-compatible full text is ignored while a stream is open.
        await c.write_event(Synthesize("One two three. Four five! Six seven").event())
        await c.write_event(SynthesizeStop().event())
        ev = await until(c, "synthesize-stopped")
        await c.disconnect()
        return [e.type for e in ev]

    types = _run(go())
    assert types.count("audio-start") == 3  # "One two three." "Four five!" "Six seven"
    assert types.count("audio-stop") == 3
    assert types[-1] == "synthesize-stopped" and "error" not in types


def _cycle_audio(events: list[Event]) -> list[bytes]:
    cycles: list[bytes] = []
    for e in events:
        if e.type == "audio-start":
            cycles.append(b"")
        elif e.type == "audio-chunk":
            cycles[-1] += e.payload or b""
    return cycles


async def _said(d: Daemon, text: str) -> bytes:
    c = await connect(d, READ_TIMEOUT_S)
    await c.write_event(Synthesize(text).event())
    (audio,) = _cycle_audio(await until(c, "audio-stop"))
    await c.disconnect()
    return audio


@pytest.mark.parametrize(
    "tokens, sentences",
    [
        (["Hello Mr.", " Smith, how", " are you today?"],
         ["Hello Mr. Smith, how are you today?"]),
        (["Hel", "lo wor", "ld. Th", "is is", " a test."],
         ["Hello world.", "This is a test."]),
        (["Pi is 3.", "14 roughly. ", "Next one."],
         ["Pi is 3.14 roughly.", "Next one."]),
        (["J. R. R. Tolkien wrote", " books. ", "He died."],
         ["J. R. R. Tolkien wrote books.", "He died."]),
        (["I was... ", "thinking. ", "Well... ", "Maybe."],
         ["I was... thinking.", "Well...", "Maybe."]),
        (["你好。", "今天天气很好！", "是吗？"],
         ["你好。", "今天天气很好！", "是吗？"]),
    ],
)  # fmt: skip
def test_streamed_text_reaches_the_engine_as_whole_sentences(
    daemon: Daemon, test_voice, tokens, sentences
):
    # The tone engine's audio is a function of the words it is given: each
    # cycle must be exactly what that sentence gives as one synthesize, after
    # the sentence pause for every sentence but the first.
    async def go() -> tuple[list[bytes], list[bytes]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(SynthesizeStart().event())
        for token in tokens:
            await c.write_event(SynthesizeChunk(token).event())
        await c.write_event(SynthesizeStop().event())
        cycles = _cycle_audio(await until(c, "synthesize-stopped"))
        await c.disconnect()
        return cycles, [await _said(daemon, s) for s in sentences]

    cycles, want = _run(go())
    pause = bytes(round(SENTENCE_PAUSE_S * test_voice.sample_rate) * SAMPLE_WIDTH)
    assert cycles == [want[0]] + [pause + w for w in want[1:]]


def test_audio_chunks_are_fixed_size_but_the_last_of_each_cycle(daemon: Daemon):
    # The tone engine yields 0.12 s (1920 samples) per word: not a multiple of
    # a chunk, so a leftover must carry over to the next word's audio.
    async def go() -> list[list[int]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Synthesize(words(12)).event())
        await c.write_event(SynthesizeStart().event())
        await c.write_event(
            SynthesizeChunk(f"{words(7, 'Ab')}. {words(5, 'Cd')}.").event()
        )
        await c.write_event(SynthesizeStop().event())
        events = await until(c, "synthesize-stopped")
        await c.disconnect()
        sizes: list[list[int]] = []
        for e in events:
            if e.type == "audio-start":
                sizes.append([])
            elif e.type == "audio-chunk":
                sizes[-1].append(len(e.payload or b""))
        return sizes

    cycles = _run(go())
    assert len(cycles) == 3
    full = SAMPLES_PER_CHUNK * SAMPLE_WIDTH
    for sizes in cycles:
        assert len(sizes) > 3 and set(sizes[:-1]) == {full}, sizes
        assert 0 < sizes[-1] <= full


def test_unknown_voice_in_a_stream_is_an_error_then_stopped(daemon: Daemon):
    async def go() -> tuple[list[Event], list[str]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(SynthesizeStart(voice=SynthesizeVoice("nobody")).event())
        await c.write_event(SynthesizeChunk("Hello there. ").event())
        await c.write_event(SynthesizeStop().event())
        ev = await until(c, "synthesize-stopped")
        await c.write_event(Synthesize("still here").event())
        after = await until(c, "audio-stop", "error")
        await c.disconnect()
        return ev, [e.type for e in after]

    ev, after = _run(go())
    assert [e.type for e in ev] == ["error", "synthesize-stopped"]
    err = Error.from_event(ev[0])
    assert err.code == "voice_not_found" and "nobody" in err.text
    assert after[0] == "audio-start" and after[-1] == "audio-stop"


def test_empty_stream_still_ends_with_stopped(daemon: Daemon):
    async def go() -> list[str]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(SynthesizeStart().event())
        await c.write_event(SynthesizeChunk("   ").event())
        await c.write_event(SynthesizeStop().event())
        ev = await until(c, "synthesize-stopped")
        await c.disconnect()
        return [e.type for e in ev]

    assert _run(go()) == ["synthesize-stopped"]


def test_unknown_events_are_ignored(daemon: Daemon):
    async def go() -> list[str]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Event("select-program", {"name": "hexvoice"}))
        await c.write_event(Event("no-such-event", {"x": 1}, payload=b"\x00\x01"))
        await c.write_event(Ping("hi").event())
        ev = await until(c, "pong")
        await c.disconnect()
        return ev

    ev = _run(go())
    assert [e.type for e in ev] == ["pong"] and Pong.from_event(ev[0]).text == "hi"


def test_describe_answers_while_another_client_synthesizes(daemon: Daemon):
    async def go() -> tuple[float, bool]:
        busy = await connect(daemon, READ_TIMEOUT_S)
        await busy.write_event(Synthesize(words(LONG_WORDS)).event())
        first = await busy.read_event()
        assert first is not None and first.type == "audio-start"
        other = await connect(daemon, READ_TIMEOUT_S)
        t0 = time.monotonic()
        await other.write_event(Describe().event())
        await until(other, "info")
        took = time.monotonic() - t0
        await other.disconnect()
        still_running = daemon.metrics()["hexvoice_worker_busy"] == 1.0
        await busy.disconnect()
        return took, still_running

    took, still_running = _run(go())
    assert still_running, "the long request had already finished; test is void"
    assert took < 1.0  # Home Assistant gives describe 1 s


@pytest.mark.parametrize(
    "data,code",
    [
        ({"text": ""}, "empty_input"),
        ({"text": "  \n "}, "empty_input"),
        ({"text": "x" * 100_000}, "string_above_max_length"),
        ({"text": "hi", "voice": {"name": "nobody"}}, "voice_not_found"),
        ({"text": "hi", "voice": {"name": "../../etc/passwd"}}, "voice_not_found"),
        ({"text": "hi", "voice": {"name": 7}}, "invalid_type"),
        ({"text": "hi", "voice": "tone"}, "invalid_type"),
        ({"text": 12}, "invalid_type"),
        ({}, "missing_required_parameter"),
    ],
)
def test_bad_synthesize_gets_error_and_connection_keeps_serving(
    daemon: Daemon, data, code
):
    async def go() -> tuple[Error, list[str]]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Event("synthesize", data))
        (err,) = await until(c, "error")
        await c.write_event(Synthesize("still here").event())
        ev = await until(c, "audio-stop", "error")
        await c.disconnect()
        return Error.from_event(err), [e.type for e in ev]

    err, types = _run(go())
    assert err.code == code and err.text
    assert types[0] == "audio-start" and types[-1] == "audio-stop"


def _raw(d: Daemon, payload: bytes, read_s: float = 5.0) -> list[dict]:
    """Send raw bytes, return the decoded events until the server closes."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(read_s)
        s.connect(str(d.wyoming))
        s.sendall(payload)
        buf = b""
        while True:
            try:
                data = s.recv(65536)
            except TimeoutError:
                raise AssertionError(
                    f"server kept the connection open: {buf!r}"
                ) from None
            if not data:
                break
            buf += data
    events = []
    lines = iter(buf.split(b"\n"))
    for line in lines:
        if not line:
            continue
        header = json.loads(line)
        if header.get("data_length"):
            header["data"] = json.loads(next(lines)[: header["data_length"]])
        events.append(header)
    return events


@pytest.mark.parametrize(
    "payload,match",
    [
        (b"this is not json\n", "not a JSON object"),
        (b"[1, 2, 3]\n", "malformed"),
        (b'{"data": {"text": "no type"}}\n', "malformed"),
        (b'{"type": "synthesize", "data_length": 2147483648}\n', "exceeds the limit"),
        (
            b'{"type": "audio-chunk", "payload_length": 2147483648}\nxx',
            "exceeds the limit",
        ),
        (b'{"type": "synthesize", "data_length": "12"}\n', "malformed"),
        (b'{"type": "synthesize", "data_length": 4}\n\xff\xfe\xfd\xfc', "not a JSON"),
        (b'{"type": "synthesize", "data": {"text": "\xff\xfe"}}\n', "not a JSON"),
        (b'{"type": "synthesize", "data": 5}\n', "'data' is not an object"),
        (b"{" + b"x" * 70_000 + b"\n", "longer than"),
    ],
)
def test_framing_errors_close_with_error_and_service_goes_on(
    daemon: Daemon, payload, match
):
    events = _raw(daemon, payload)
    assert [e["type"] for e in events] == ["error"], events
    assert match in events[0]["data"]["text"]
    assert events[0]["data"]["code"] == "bad_event"

    async def next_client() -> list[str]:
        c = await connect(daemon, READ_TIMEOUT_S)
        await c.write_event(Synthesize("next client").event())
        ev = await until(c, "audio-stop", "error")
        await c.disconnect()
        return [e.type for e in ev]

    assert _run(next_client())[-1] == "audio-stop"


def test_inline_data_in_header_is_accepted(daemon: Daemon):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(str(daemon.wyoming))
        s.sendall(b'{"type": "ping", "data": {"text": "inline"}}\n')
        line = s.makefile("rb").readline()
    header = json.loads(line)
    assert header["type"] == "pong"


def test_half_closed_client_still_gets_its_audio(daemon: Daemon):
    """A client that shuts down its writing side (socat, printf | nc) is not gone."""
    req = json.dumps({"type": "synthesize", "data": {"text": "half closed"}}).encode()
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(daemon.wyoming))
        s.sendall(req + b"\n")
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while chunk := s.recv(65536):
            buf += chunk
    assert b'"audio-start"' in buf and b'"audio-stop"' in buf
