"""Text no engine should see (NUL characters) is refused on both protocols,
with a clear message, and the service keeps serving."""

from __future__ import annotations

import asyncio

import pytest
from wyoming.audio import AudioStop
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from tests.daemon.conftest import Daemon

NUL_MESSAGE = "NUL character (U+0000) at position 5"


@pytest.fixture(scope="module")
def daemon(daemon_factory) -> Daemon:
    return daemon_factory("text")


def _speech(d: Daemon, text: str) -> tuple[int, dict]:
    with d.http_client() as c:
        r = c.post(
            "/v1/audio/speech",
            json={
                "model": "tts-1",
                "voice": "tone",
                "input": text,
                "response_format": "pcm",
            },
        )
    return r.status_code, (
        r.json() if r.status_code != 200 else {"bytes": len(r.content)}
    )


async def _conversation(d: Daemon, events: list[Event], until: str) -> list[Event]:
    c = AsyncClient.from_uri(d.uri)
    c.read_timeout = 30
    await c.connect()
    for e in events:
        await c.write_event(e)
    out = []
    while not out or out[-1].type != until:
        e = await c.read_event()
        assert e is not None, [x.type for x in out]
        out.append(e)
    await c.disconnect()
    return out


def test_http_refuses_nul(daemon: Daemon):
    status, body = _speech(daemon, "hello\x00there")
    assert status == 400
    err = body["error"]
    assert NUL_MESSAGE in err["message"] and err["param"] == "input"
    assert err["code"] == "invalid_text" and err["type"] == "invalid_request_error"
    status, body = _speech(daemon, "hello there")
    assert status == 200 and body["bytes"] > 0


def test_wyoming_synthesize_refuses_nul(daemon: Daemon):
    events = asyncio.run(
        _conversation(
            daemon,
            [
                Synthesize(text="hello\x00there").event(),
                Synthesize(text="ok then").event(),
            ],
            AudioStop().event().type,
        )
    )
    assert events[0].type == "error"
    assert NUL_MESSAGE in events[0].data["text"]
    assert events[0].data["code"] == "invalid_text"
    assert [e.type for e in events[1:]][0] == "audio-start"  # the next one is served


def test_wyoming_stream_refuses_nul(daemon: Daemon):
    stream = [
        SynthesizeStart().event(),
        SynthesizeChunk(text="Hello. ").event(),
        SynthesizeChunk(text="there\x00 you. ").event(),
        SynthesizeChunk(text="More text.").event(),
        SynthesizeStop().event(),
    ]
    events = asyncio.run(
        _conversation(daemon, stream, SynthesizeStopped().event().type)
    )
    errors = [e for e in events if e.type == "error"]
    assert (
        len(errors) == 1
        and "NUL character (U+0000) at position 5" in errors[0].data["text"]
    )
    assert events[-1].type == "synthesize-stopped"
    # ... and the connection after it is served as usual.
    again = asyncio.run(
        _conversation(
            daemon, [Synthesize(text="fine").event()], AudioStop().event().type
        )
    )
    assert [e.type for e in again if e.type == "error"] == []
