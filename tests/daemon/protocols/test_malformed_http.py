"""Malformed HTTP bodies, codings and forms on the running service: every one
is a 4xx in OpenAI's envelope, none a 500 or a traceback in the log.

Clients are httpx (bodies it sends as given), curl (its own ``Expect:
100-continue``) and a raw asyncio stream over the Unix socket where the exact
bytes on the wire matter (the status line before any body, broken framing).
The service is the tone voice with the test-vad ASR model (asr_service.py).
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.daemon.asr_service import ASR_MODEL, asr_daemon
from tests.daemon.conftest import Daemon
from tests.daemon.protocols.audio_samples import speech_wav

#: A file's bytes that are no UTF-8 from byte 5: read as a text field, the
#: second ``file`` used to be refused as "file: not UTF-8 (byte 5)".
BINARY = b"RIFF\x00\xff\xfe\x00"
SPEECH = {"model": "tts-1", "input": "fine", "voice": "tone", "response_format": "pcm"}
JSON = "application/json"
BOUNDARY = "b0undary"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"
#: The body routes and what each takes (the speech route JSON, the others forms).
BODY_ROUTES = [
    ("/v1/audio/speech", JSON),
    ("/v1/audio/transcriptions", MULTIPART),
    ("/v1/voices", MULTIPART),
]
#: Announced in the Expect tests: far past every route's limit.
TEN_GB = 10 * 1024**3
TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, test_voice, bins, onnx_dir) -> Iterator[Daemon]:
    yield from asr_daemon(
        tmp_path_factory.mktemp("malformed"), test_voice, bins, onnx_dir
    )


def _post(
    d: Daemon, path: str, body: bytes, ctype: str, coding: str | None = None
) -> httpx.Response:
    headers = {"Content-Type": ctype}
    if coding is not None:
        headers["Content-Encoding"] = coding
    with d.http_client() as c:
        return c.post(path, content=body, headers=headers)


def _error(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error"
    return err


def _serves(d: Daemon) -> None:
    with d.http_client() as c:
        assert c.post("/v1/audio/speech", json=SPEECH).status_code == 200


async def _raw(d: Daemon, head: bytes, body: bytes = b"") -> list[bytes]:
    """The response lines to ``head`` (then ``body``, once 100 Continue came),
    up to the server's close."""
    reader, writer = await asyncio.open_unix_connection(str(d.http))
    try:
        writer.write(head)
        await writer.drain()
        async with asyncio.timeout(TIMEOUT_S):
            first = await reader.readline()
            if first.startswith(b"HTTP/1.1 100") and body:
                await reader.readline()  # the 100's empty line
                writer.write(body)
                await writer.drain()
                return [first, *(await reader.read()).split(b"\r\n")]
            return [first, *(await reader.read()).split(b"\r\n")]
    finally:
        writer.close()


def _head(path: str, ctype: str, length: int, expect: str = "100-continue") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n"
        f"Content-Length: {length}\r\nExpect: {expect}\r\nConnection: close\r\n\r\n"
    ).encode()


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
@pytest.mark.parametrize("path,ctype", BODY_ROUTES)
def test_a_body_that_is_not_its_coding_is_400(daemon: Daemon, path, ctype, coding):
    r = _post(daemon, path, b"not compressed", ctype, coding)
    err = _error(r, 400)
    assert err["code"] == "invalid_content_encoding"
    assert err["message"].startswith(f"request body: not valid '{coding}' data")
    _serves(daemon)


def test_valid_gzip_and_deflate_bodies_are_read(daemon: Daemon):
    json_body = httpx.Request("POST", "/", json=SPEECH).read()
    r = _post(daemon, "/v1/audio/speech", gzip.compress(json_body), JSON, "gzip")
    assert r.status_code == 200 and len(r.content) > 0, r.text
    files = {"file": ("a.wav", speech_wav(), "audio/wav")}
    form = httpx.Request("POST", "/", files=files, data={"model": ASR_MODEL})
    ctype = form.headers["content-type"]
    r = _post(daemon, "/v1/audio/transcriptions", zlib.compress(form.read()), ctype,
              "deflate")  # fmt: skip
    assert r.status_code == 200 and "speech" in r.json()["text"], r.text


@pytest.mark.parametrize("coding", ["bogus", "gzip, gzip", "compress"])
@pytest.mark.parametrize("path,ctype", BODY_ROUTES)
def test_a_coding_the_service_cannot_read_is_415(daemon: Daemon, path, ctype, coding):
    r = _post(daemon, path, b"{}", ctype, coding)
    err = _error(r, 415)
    assert (
        err["code"] == "unsupported_content_encoding" and repr(coding) in err["message"]
    )
    assert r.headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("path,ctype", BODY_ROUTES)
def test_expect_continue_past_the_limit_is_413_before_any_body(daemon, path, ctype):
    lines = asyncio.run(_raw(daemon, _head(path, ctype, TEN_GB)))
    # Refused at once, instead of "HTTP/1.1 100 Continue", and closed.
    assert lines[0].startswith(b"HTTP/1.1 413 "), lines
    assert b"connection: close" in [ln.lower() for ln in lines]
    assert b'"code": "payload_too_large"' in lines[-1]
    assert b"a Content-Length of %d" % TEN_GB in lines[-1]


def test_expect_continue_within_the_limit_continues(daemon: Daemon):
    body = httpx.Request("POST", "/", json=SPEECH).read()
    head = _head("/v1/audio/speech", JSON, len(body))
    lines = asyncio.run(_raw(daemon, head, body))
    assert lines[0] == b"HTTP/1.1 100 Continue\r\n"
    assert lines[1].startswith(b"HTTP/1.1 200 "), lines[:3]


def test_an_expectation_other_than_continue_is_417(daemon: Daemon):
    head = _head("/v1/audio/speech", JSON, 2, expect="200-ok")
    lines = asyncio.run(_raw(daemon, head))
    assert lines[0].startswith(b"HTTP/1.1 417 ") and b"expectation_failed" in lines[-1]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_curl_is_refused_before_it_uploads(daemon: Daemon, tmp_path: Path):
    big = tmp_path / "big.wav"
    with big.open("wb") as f:  # sparse: 30 MB announced, nothing written
        f.truncate(30 * 1024 * 1024)
    r = subprocess.run(
        ["curl", "-v", "-sS", "--unix-socket", str(daemon.http), "-o", "/dev/null",
         "-w", "%{http_code}", "-F", f"file=@{big}", "-F", "model=whisper-1",
         "http://localhost/v1/audio/transcriptions"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.stdout == "413", (r.stdout, r.stderr)
    # curl asked (it does for uploads this large) and was not told to go on.
    assert "> Expect: 100-continue" in r.stderr
    assert "< HTTP/1.1 100" not in r.stderr, r.stderr


def _parts(*parts: tuple[str, str | None, bytes]) -> list:
    """httpx ``files=`` for parts in order: (name, filename or None, data)."""
    return [(name, (filename, data)) for name, filename, data in parts]


#: (route, parts, the field refused, its code)
FORMS = [
    ("/v1/audio/transcriptions", _parts(("model", None, b"whisper-1"),
     ("file", "a.wav", BINARY), ("file", "b.wav", BINARY)), "file",
     "duplicate_parameter"),
    ("/v1/audio/transcriptions", _parts(("model", None, b"whisper-1"),
     ("model", None, b"whisper-1"), ("file", "a.wav", BINARY)), "model",
     "duplicate_parameter"),
    ("/v1/voices", _parts(("name", None, b"v"), ("file", "a.wav", BINARY),
     ("file", "b.wav", BINARY)), "file", "duplicate_parameter"),
    ("/v1/voices", _parts(("name", None, b"v"), ("file", "a.wav", BINARY),
     ("audio", "b.wav", BINARY)), "audio", "duplicate_parameter"),
    ("/v1/voices", _parts(("name", None, b"v"), ("name", None, b"w"),
     ("file", "a.wav", BINARY)), "name", "duplicate_parameter"),
    ("/v1/audio/transcriptions", _parts(("model", "m.txt", b"whisper-1"),
     ("file", "a.wav", BINARY)), "model", "invalid_type"),
    ("/v1/audio/transcriptions", _parts(("model", None, b"whisper-1"),
     ("file", None, BINARY)), "file", "invalid_type"),
    ("/v1/voices", _parts(("name", None, b"v"), ("file", "a.wav", BINARY),
     ("aux", None, BINARY)), "aux", "invalid_type"),
]  # fmt: skip


@pytest.mark.parametrize("path,parts,field,code", FORMS)
def test_a_field_twice_or_of_the_wrong_kind_is_400(daemon, path, parts, field, code):
    with daemon.http_client() as c:
        r = c.post(path, files=parts)
    err = _error(r, 400)
    assert (err["param"], err["code"]) == (field, code), err
    expected = "once, found a second one" if code == "duplicate_parameter" else (
        "expected a file" if field in ("file", "aux") else "expected a text field"
    )  # fmt: skip
    assert err["message"].startswith(f"{field}: ") and expected in err["message"]


def test_repeated_fields_the_form_does_not_declare_are_ignored(daemon: Daemon):
    parts = _parts(("model", None, ASR_MODEL), ("file", "a.wav", speech_wav()),
                   ("timestamp_granularities[]", None, b"word"),
                   ("timestamp_granularities[]", None, b"segment"),
                   ("unknown", "x.bin", BINARY))  # fmt: skip
    with daemon.http_client() as c:
        r = c.post("/v1/audio/transcriptions", files=parts)
    assert r.status_code == 200, r.text


def _form(*chunks: str) -> bytes:
    return "\r\n".join(chunks).encode()


_PART = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n'
#: Multipart bodies the reader cannot parse, each a 400 naming the fault.
BROKEN_FORMS = {
    "no boundary at all": b"just some bytes",
    "cut short": _form(_PART, "whisp"),
    "no closing boundary": _form(_PART, "whisper-1"),
    "a part header without a colon": _form(f"--{BOUNDARY}", "no colon", "", "x"),
    "a wrong boundary after a part": _form(_PART, "whisper-1", "--other--", ""),
}


@pytest.mark.parametrize("body", BROKEN_FORMS.values(), ids=list(BROKEN_FORMS))
@pytest.mark.parametrize("path", ["/v1/audio/transcriptions", "/v1/voices"])
def test_a_broken_multipart_body_is_400(daemon: Daemon, path, body):
    err = _error(_post(daemon, path, body, MULTIPART), 400)
    assert err["code"] == "invalid_multipart", err
    assert err["message"].startswith("request body: not a valid multipart form (")
    _serves(daemon)


#: Requests aiohttp's parser refuses itself, or routes refuse before a body:
#: each a 4xx (the parser's own are plain text), never a 5xx.
SWEEP = {
    "HTTP/9.9": b"GET /health HTTP/9.9\r\n\r\n",
    "a header without a colon": b"GET /health HTTP/1.1\r\nbad header\r\n\r\n",
    "Content-Length abc": b"GET /health HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
    "chunked and a length": b"POST /v1/audio/speech HTTP/1.1\r\n"
    b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc",
    "a bad chunk size": b"POST /v1/audio/speech HTTP/1.1\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n",
    "a 10 kB path": b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\n\r\n",
    "a 10 kB header": b"GET /health HTTP/1.1\r\nX: " + b"a" * 10_000 + b"\r\n\r\n",
    "300 headers": b"GET /health HTTP/1.1\r\n" + b"X: y\r\n" * 300 + b"\r\n",
    "HTTP/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    "zstd": b"POST /v1/audio/speech HTTP/1.1\r\nContent-Encoding: zstd\r\n"
    b"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
    "a wrong method": b"PUT /v1/audio/speech HTTP/1.1\r\nContent-Length: 3\r\n"
    b"Connection: close\r\n\r\nabc",
    "an unknown path": b"POST /nope HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde",
}


@pytest.mark.parametrize("request_", SWEEP.values(), ids=list(SWEEP))
def test_malformed_requests_are_4xx_never_5xx(daemon: Daemon, request_):
    lines = asyncio.run(_raw(daemon, request_))
    assert lines[0][:10] in (b"HTTP/1.0 4", b"HTTP/1.1 4"), lines


@pytest.mark.parametrize("path,ctype", BODY_ROUTES)
def test_a_body_that_ends_early_leaves_no_trace(daemon: Daemon, path, ctype):
    async def go() -> bytes:
        reader, writer = await asyncio.open_unix_connection(str(daemon.http))
        head = _head(path, ctype, 1000).replace(b"Expect: 100-continue\r\n", b"")
        writer.write(head + f"--{BOUNDARY}\r\n{{".encode())
        writer.write_eof()  # the client stops sending (and still reads)
        async with asyncio.timeout(TIMEOUT_S):
            data = await reader.read()
        writer.close()
        return data

    data = asyncio.run(go())
    assert not data.startswith(b"HTTP/1.1 5"), data
    _serves(daemon)
    assert "Traceback" not in daemon.stderr()
