"""One table of bad requests, run against both protocols on the running service.

Each row is one mistake, written in each protocol's own wire form (``None``
where that protocol has no such field: Wyoming carries no speed or format
(its ``seed`` is hexvoice's); OpenAI's speech API no speaker or language).
Both protocols must answer it with the same code and the same "expected ...,
found ..." message, the field named by its wire path; nothing may be queued
(no graph call, no ``ok`` outcome, the queue empty) and the next good request
must be served.
The same rows also run straight against ``requests.check``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event

from daemon.protocols.openai import encoders
from daemon.sdk.capabilities import MAX_SPEED, MIN_SPEED, Capabilities
from daemon.service.edge.refusals import (
    BadFormat,
    BadRequest,
    BadText,
    BadValue,
    EmptyText,
    TextTooLong,
    UnknownLanguage,
    UnknownSpeaker,
)
from daemon.service.edge.requests import (
    SynthesisRequest,
    TranscriptionRequest,
    check,
    check_duration,
)
from tests.daemon.conftest import Daemon, copy_voice, serving

#: The service's text limit in this module (the default, OpenAI's).
LIMIT = 4096
READ_TIMEOUT_S = 30
GOOD_BODY = {
    "model": "tts-1",
    "input": "fine",
    "voice": "tone",
    "response_format": "pcm",
}
SPEED_RANGE = f"a number in [{MIN_SPEED}, {MAX_SPEED}]"
NUL_FOUND = "a NUL character (U+0000) at position 5"
VOICES = "['solo', 'tone']"


@dataclass(frozen=True)
class Bad:
    """One mistake: its wire forms, and the answer both protocols must give."""

    id: str
    #: ``synthesize`` event data, or None (Wyoming cannot say it)
    wyoming: dict[str, Any] | None
    #: fields over GOOD_BODY (``...`` deletes one), or None (HTTP cannot say it)
    http: dict[str, Any] | None
    code: str
    #: (Wyoming path, HTTP path) of the field named
    paths: tuple[str, str]
    message: str


def _text(text: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"text": text}, {"input": text}


# fmt: off
ROWS = [
    Bad("empty text", *_text(""), "empty_input", ("text", "input"),
        "expected text to speak, found ''"),
    Bad("blank text", *_text("  \n "), "empty_input", ("text", "input"),
        "expected text to speak, found '  \\n '"),
    Bad("NUL", *_text("hello\x00there"), "invalid_text", ("text", "input"),
        f"expected text without NUL characters, found {NUL_FOUND}"),
    Bad("too long", *_text("x" * (LIMIT + 1)), "string_above_max_length",
        ("text", "input"), f"expected at most {LIMIT} characters, found {LIMIT + 1}"),
    Bad("text not a string", *_text(12), "invalid_type", ("text", "input"),
        "expected a string, found 12"),
    Bad("no text", {}, {"input": ...}, "missing_required_parameter",
        ("text", "input"), "expected a string, found nothing (missing field)"),
    Bad("unknown voice", {"text": "hi", "voice": {"name": "nobody"}},
        {"voice": "nobody"}, "voice_not_found", ("voice.name", "voice"),
        f"expected one of {VOICES}, found 'nobody'"),
    Bad("path as voice", {"text": "hi", "voice": {"name": "../../etc/passwd"}},
        {"voice": {"id": "../../etc/passwd"}}, "voice_not_found",
        ("voice.name", "voice"), f"expected one of {VOICES}, found '../../etc/passwd'"),
    Bad("unknown speaker", {"text": "hi", "voice": {"name": "tone", "speaker": "7"}},
        None, "unknown_speaker", ("voice.speaker", ""),
        "expected one of ['0', '1'], found '7'"),
    Bad("speaker of a single-speaker voice",
        {"text": "hi", "voice": {"name": "solo", "speaker": "0"}}, None,
        "unknown_speaker", ("voice.speaker", ""),
        "expected no speaker (the voice has a single speaker), found '0'"),
    Bad("no voice speaks the language", {"text": "hi", "voice": {"language": "xx"}},
        None, "unsupported_language", ("voice.language", ""),
        "expected a language a loaded voice speaks, one of ['en_US'] (or the name, "
        "any case: ['English']), found 'xx'"),
    Bad("the voice does not speak the language",
        {"text": "hi", "voice": {"name": "tone", "language": "de_DE"}}, None,
        "unsupported_language", ("voice.language", ""),
        "expected one of ['en_US'] (or the name, any case: ['English']), found "
        "'de_DE'"),
    Bad("speed 0", None, {"speed": 0}, "invalid_value", ("", "speed"),
        f"expected {SPEED_RANGE}, found 0"),
    Bad("speed 9", None, {"speed": 9}, "invalid_value", ("", "speed"),
        f"expected {SPEED_RANGE}, found 9"),
    Bad("speed 'fast'", None, {"speed": "fast"}, "invalid_type", ("", "speed"),
        "expected an integer or a number, found 'fast'"),
    Bad("negative seed", {"text": "hi", "seed": -1}, {"seed": -1}, "invalid_value",
        ("seed", "seed"), "expected a non-negative integer, found -1"),
    Bad("fractional seed", {"text": "hi", "seed": 1.5}, {"seed": 1.5},
        "invalid_type", ("seed", "seed"), "expected an integer or null, found 1.5"),
    Bad("unsupported format", None, {"response_format": "aac"}, "unsupported_format",
        ("", "response_format"),
        f"expected one of {sorted(encoders.available_formats())}, found 'aac'"),
]
# fmt: on


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("bad")
    solo = copy_voice(test_voice, root / "solo", name="solo", speakers=[])
    voices = [{"bundle": str(test_voice.bundle)}, {"bundle": str(solo.bundle)}]
    yield from serving(root / "d", test_voice, voices=voices)


def _counts(d: Daemon, protocol: str) -> dict[str, float]:
    m = d.metrics()
    out = {
        o: m[f'hexvoice_requests_total{{outcome="{o}",protocol="{protocol}"}}']
        for o in ("ok", "bad_request")
    }
    return {**out, "graph_calls": m["hexvoice_graph_calls_total"]}


async def _wyoming(d: Daemon, data: dict[str, Any]) -> tuple[Error, list[str]]:
    """The error for ``data``, then the event types answering a good request."""
    c = AsyncClient.from_uri(d.uri)
    c.read_timeout = READ_TIMEOUT_S
    await c.connect()
    try:
        await c.write_event(Event("synthesize", data))
        err = await c.read_event()
        assert err is not None and err.type == "error", err
        await c.write_event(Event("synthesize", {"text": "fine"}))
        types = []
        while not types or types[-1] not in ("audio-stop", "error"):
            e = await c.read_event()
            assert e is not None, types
            types.append(e.type)
        return Error.from_event(err), types
    finally:
        await c.disconnect()


def _http(d: Daemon, fields: dict[str, Any]) -> tuple[int, dict, int]:
    """(status, error object) for the body, then the good request's status."""
    body = {k: v for k, v in {**GOOD_BODY, **fields}.items() if v is not ...}
    with d.http_client() as c:
        r = c.post("/v1/audio/speech", json=body)
        good = c.post("/v1/audio/speech", json=GOOD_BODY)
    return r.status_code, r.json()["error"], good.status_code


def _expected(row: Bad, path: str) -> str:
    return f"{path}: {row.message}" if path else row.message


@pytest.fixture(scope="module")
def good_calls(daemon: Daemon) -> float:
    """Graph calls one good request ("fine": one word) costs."""
    before = daemon.metrics()["hexvoice_graph_calls_total"]
    with daemon.http_client() as c:
        assert c.post("/v1/audio/speech", json=GOOD_BODY).status_code == 200
    calls = daemon.metrics()["hexvoice_graph_calls_total"] - before
    assert calls > 0
    return calls


def _wire(row: Bad, protocol: str) -> dict[str, Any] | None:
    return row.wyoming if protocol == "wyoming" else row.http


#: Every mistake on every protocol that can say it.
CASES = [
    pytest.param(row, protocol, id=f"{protocol}-{row.id}")
    for row in ROWS
    for protocol in ("wyoming", "http")
    if _wire(row, protocol) is not None
]


@pytest.mark.parametrize("row,protocol", CASES)
def test_refused_alike_before_queueing(
    daemon: Daemon, good_calls: float, row: Bad, protocol: str
):
    wire = _wire(row, protocol)
    assert wire is not None
    before = _counts(daemon, protocol)
    if protocol == "wyoming":
        err, types = asyncio.run(_wyoming(daemon, wire))
        code, message = err.code, err.text
        assert types[0] == "audio-start" and types[-1] == "audio-stop"
        path = row.paths[0]
    else:
        status, error, good = _http(daemon, wire)
        code, message = error["code"], error["message"]
        path = row.paths[1]
        assert status == 400 and good == 200
        assert error["param"] == path and error["type"] == "invalid_request_error"
    assert (code, message) == (row.code, _expected(row, path))
    after = _counts(daemon, protocol)
    # One refusal counted, and only the good request reached the NPU: a queued
    # request would count an outcome of its own and run graph calls.
    assert after["bad_request"] == before["bad_request"] + 1
    assert after["ok"] == before["ok"] + 1
    assert after["graph_calls"] - before["graph_calls"] == good_calls
    assert daemon.metrics()["hexvoice_queue_depth"] == 0


#: The voice mistakes, said at the opening of a Wyoming text stream instead.
STREAMED = [
    pytest.param(row, id=row.id)
    for row in ROWS
    if row.wyoming is not None and "voice" in row.wyoming
]


@pytest.mark.parametrize("row", STREAMED)
def test_a_stream_opening_is_refused_alike(daemon: Daemon, row: Bad):
    async def go() -> list[Event]:
        c = AsyncClient.from_uri(daemon.uri)
        c.read_timeout = READ_TIMEOUT_S
        await c.connect()
        try:
            await c.write_event(
                Event("synthesize-start", {"voice": row.wyoming["voice"]})
            )
            await c.write_event(Event("synthesize-chunk", {"text": "Hello there. "}))
            await c.write_event(Event("synthesize-stop"))
            events = []
            while not events or events[-1].type != "synthesize-stopped":
                e = await c.read_event()
                assert e is not None, events
                events.append(e)
            return events
        finally:
            await c.disconnect()

    before = _counts(daemon, "wyoming")
    events = asyncio.run(go())
    assert [e.type for e in events] == ["error", "synthesize-stopped"]
    err = Error.from_event(events[0])
    assert (err.code, err.text) == (row.code, _expected(row, row.paths[0]))
    after = _counts(daemon, "wyoming")
    assert after["bad_request"] == before["bad_request"] + 1
    assert after["graph_calls"] == before["graph_calls"]  # nothing was queued


def test_a_nul_in_a_streamed_piece_is_refused_at_its_position(daemon: Daemon):
    """A stream's pieces are checked as they arrive: one error for the piece
    (its position counted in that piece), the rest of the stream is not spoken,
    and the stream still ends in synthesize-stopped."""

    async def go(events: list[Event]) -> list[Event]:
        c = AsyncClient.from_uri(daemon.uri)
        c.read_timeout = READ_TIMEOUT_S
        await c.connect()
        try:
            for e in events:
                await c.write_event(e)
            out: list[Event] = []
            while not out or out[-1].type not in ("synthesize-stopped", "audio-stop"):
                e = await c.read_event()
                assert e is not None, out
                out.append(e)
            return out
        finally:
            await c.disconnect()

    pieces = ["Hello. ", "there\x00 you. ", "More text."]
    stream = [
        Event("synthesize-start", {}),
        *(Event("synthesize-chunk", {"text": p}) for p in pieces),
        Event("synthesize-stop"),
    ]
    before = _counts(daemon, "wyoming")
    events = asyncio.run(go(stream))
    errors = [Error.from_event(e) for e in events if e.type == "error"]
    message = f"text: expected text without NUL characters, found {NUL_FOUND}"
    assert [(e.code, e.text) for e in errors] == [("invalid_text", message)]
    assert events[-1].type == "synthesize-stopped"
    assert "audio-start" not in [e.type for e in events]  # nothing was spoken
    after = _counts(daemon, "wyoming")
    assert after["bad_request"] == before["bad_request"] + 1
    assert after["graph_calls"] == before["graph_calls"]
    # ... and the connection after it is served as usual.
    again = asyncio.run(go([Event("synthesize", {"text": "fine"})]))
    assert [e.type for e in again if e.type == "error"] == []


def test_rows_cover_both_protocols():
    """The table says each mistake on both protocols wherever both can say it."""
    both = [r.id for r in ROWS if r.wyoming is not None and r.http is not None]
    assert len(both) >= 6, both


# -- the same mistakes against the one check itself ------------------------------

TONE = Capabilities("tts", ("en_US",), 16000, speakers=("0", "1"), max_input=LIMIT)
SOLO = Capabilities("tts", ("en_US",), 16000, max_input=LIMIT)
FIXED = Capabilities("tts", ("zh",), 32000, speed_range=None, max_input=math.inf)
ASR = Capabilities("asr", ("en",), sample_rates_in=(16000,), max_input=30.0)
ANY_RATE = Capabilities("asr", ("en",), max_input=30.0)
#: A refusal of a language lists the codes and the names a request may use.
NAMED = "expected one of ['en'] (or the name, any case: ['English']), found"


@pytest.mark.parametrize(
    "request_,caps,error,message",
    [
        (SynthesisRequest(""), TONE, EmptyText, "text: expected text to speak"),
        (SynthesisRequest("a\x00b"), TONE, BadText, "at position 1"),
        (SynthesisRequest("x" * 5000), TONE, TextTooLong, "at most 4096 characters"),
        (SynthesisRequest("hi", speaker="0"), SOLO, UnknownSpeaker, "single speaker"),
        (SynthesisRequest("hi", language="de"), TONE, UnknownLanguage, "found 'de'"),
        (SynthesisRequest("hi", speed=0), TONE, BadValue, "found 0"),
        (SynthesisRequest("hi", speed=math.nan), TONE, BadValue, "found nan"),
        (SynthesisRequest("hi", speed=math.inf), TONE, BadValue, "found inf"),
        (SynthesisRequest("hi", speed="fast"), TONE, BadValue, "found 'fast'"),  # type: ignore[arg-type]
        (SynthesisRequest("hi", speed=True), TONE, BadValue, "found True"),
        (SynthesisRequest("hi", speed=2.0), FIXED, BadValue, "expected 1.0"),
        (SynthesisRequest("hi", seed=-1), TONE, BadValue, "non-negative"),
        (SynthesisRequest("hi", seed=1.5), TONE, BadValue, "found 1.5"),  # type: ignore[arg-type]
        (SynthesisRequest("hi", seed=True), TONE, BadValue, "found True"),
        (SynthesisRequest("hi", format="aac"), TONE, BadFormat, "found 'aac'"),
        (SynthesisRequest("hi"), ASR, BadRequest, "a text-to-speech voice"),
        (TranscriptionRequest(), TONE, BadRequest, "a speech-recognition model"),
        (TranscriptionRequest(sample_rate=8000), ASR, BadValue, "[16000], found 8000"),
        (TranscriptionRequest(channels=9), ASR, BadValue, "in [1, 8], found 9"),
        (TranscriptionRequest(channels=0), ASR, BadValue, "in [1, 8], found 0"),
        (TranscriptionRequest(sample_rate=300000), ANY_RATE, BadValue, "found 300000"),
        (TranscriptionRequest(sample_rate=7999), ANY_RATE, BadValue, "[8000, 192000]"),
        (TranscriptionRequest(sample_rate=True), ANY_RATE, BadValue, "found True"),  # type: ignore[arg-type]
        (TranscriptionRequest(language="fr"), ASR, UnknownLanguage, "found 'fr'"),
        (TranscriptionRequest(language="Klingon"), ASR, UnknownLanguage, NAMED),
        (TranscriptionRequest(language="French"), ASR, UnknownLanguage, "'French'"),
        (TranscriptionRequest(prompt="a\x00"), ASR, BadText, "NUL"),
    ],
)
def test_the_one_check(request_, caps, error, message):
    with pytest.raises(error) as info:
        check(request_, caps, formats=("wav", "pcm"))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "request_,caps",
    [
        (SynthesisRequest("hi", speaker="1", speed=4.0, seed=0), TONE),
        (SynthesisRequest("hi", language="en_GB", format="wav"), TONE),
        (SynthesisRequest(" \x20", piece=True), TONE),  # a stream's blank piece
        (SynthesisRequest(None, voice="tone"), TONE),  # a stream's opening
        (SynthesisRequest("你好", speed=1.0), FIXED),
        (TranscriptionRequest(language="en_US", prompt="Hexvoice"), ASR),
        (TranscriptionRequest(language="English"), ASR),  # upstream's names,
        (TranscriptionRequest(language="eNGLISH"), ASR),  # in any case
        (TranscriptionRequest(language="en-GB"), ASR),
        (TranscriptionRequest(sample_rate=192000, channels=8), ANY_RATE),
        (TranscriptionRequest(sample_rate=8000, channels=1), ANY_RATE),
    ],
)
def test_good_requests_pass(request_, caps):
    check(request_, caps, formats=("wav", "pcm"))


def test_audio_past_the_cap_is_refused_with_both_lengths():
    check_duration(30.0, 30.0)  # up to the cap
    with pytest.raises(BadValue) as info:
        check_duration(7200.0, 1800.0)
    assert str(info.value) == "audio: expected at most 1800 s of audio, found 7200.00 s"
