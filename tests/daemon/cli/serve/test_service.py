"""The service as systemd runs it: notify/watchdog, queueing, cancellation, signals,
socket activation, reload and configuration errors."""

from __future__ import annotations

import asyncio
import grp
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import read_event, write_event
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from daemon.cli.serve.service import exit_status
from daemon.sdk.bundles.manifest import BundleError, sha256_file
from daemon.service.config import ConfigError
from qnnrt import QnnError, QnnLibraryError
from tests.daemon.conftest import (
    LONG_WORDS,
    ROOT,
    SLOW_VOICES,
    SLOW_WARMUP_CALLS,
    Daemon,
    ServiceVoice,
    copy_voice,
    flip_byte,
    start_daemon,
    words,
    write_config,
)

QUEUE = 4
#: Graph calls of one warm-up (~0.2 ms each on the simulator): ~20 s in all.
LONG_WARMUP_CALLS = 100_000
#: sd_notify watchdog period given to the daemon; it pings every half of it.
WATCHDOG_USEC = 400_000
STALL_S = 1.0
needs_activate = pytest.mark.skipif(
    shutil.which("systemd-socket-activate") is None,
    reason="systemd-socket-activate missing (apt-get install systemd)",
)


@pytest.fixture(scope="module")
def daemon(daemon_factory) -> Daemon:
    return daemon_factory(
        "serve",
        extra_env={"WATCHDOG_USEC": str(WATCHDOG_USEC)},
        limits={
            "queue_size": QUEUE,
            "stall_timeout_s": STALL_S,
            "max_input_chars": 50_000,
        },
        listen={"socket_group": grp.getgrgid(os.getgid()).gr_name},
    )


async def _wyoming(d: Daemon) -> AsyncClient:
    c = AsyncClient.from_uri(d.uri)
    c.read_timeout = 30
    await c.connect()
    return c


def _wait(pred, timeout: float = 10.0, step: float = 0.01) -> float:  # noqa: ANN001
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("condition not met in time")
        time.sleep(step)
    return time.monotonic() - t0


def test_notify_sequence_and_watchdog_pings(daemon: Daemon):
    lines = daemon.notify.lines()
    assert lines[0].startswith("STATUS=Loading")
    assert lines.index("READY=1") > 0
    assert any(x.startswith("STATUS=Ready: 1 voice(s)") for x in lines)
    n0 = daemon.notify.lines().count("WATCHDOG=1")
    time.sleep(1.0)
    pings = daemon.notify.lines().count("WATCHDOG=1") - n0
    assert 3 <= pings <= 7  # every 0.2 s


def test_socket_group_applied(daemon: Daemon):
    assert os.stat(daemon.wyoming).st_gid == os.getgid()


def test_hung_npu_call_stops_watchdog_but_not_health(daemon: Daemon):
    stall = 2.5

    async def go() -> None:
        c = await _wyoming(daemon)
        await c.write_event(Synthesize(f"before [[stall:{stall}]] after").event())
        await asyncio.sleep(STALL_S + 0.6)  # the stall now exceeds stall_timeout_s
        with daemon.http_client(timeout=2) as h:
            t0 = time.monotonic()
            r = h.get("/health")
            took = time.monotonic() - t0
        assert r.status_code == 503 and "stuck" in r.json()["worker"]
        assert took < 0.5  # the event loop is free while the NPU worker hangs
        while (e := await c.read_event()) is not None and e.type != "audio-stop":
            pass
        await c.disconnect()

    asyncio.run(go())
    time.sleep(0.6)  # a few watchdog periods after the worker is free again
    pings = [t for t, m in daemon.notify.messages if m == "WATCHDOG=1"]
    gaps = [b - a for a, b in zip(pings, pings[1:])]
    assert max(gaps) > STALL_S, "pings went on while the worker hung"
    assert gaps[-1] < 0.3, "pings did not resume after the stall"
    statuses = [x for x in daemon.notify.lines() if x.startswith("STATUS=")]
    assert any(x.startswith("STATUS=Unhealthy: NPU worker stuck") for x in statuses)
    assert statuses[-1].startswith("STATUS=Ready")


def test_twenty_clients_against_a_queue_of_four(daemon: Daemon, test_voice):
    text = words(150, "c")
    expect = len(text.split()) * round(0.12 * test_voice.sample_rate) * 2

    async def wy() -> str:
        c = await _wyoming(daemon)
        await c.write_event(Synthesize(text).event())
        n = 0
        while True:
            e = await c.read_event()
            assert e is not None
            if e.type == "error":
                err = Error.from_event(e)
                await c.disconnect()
                assert err.code == "busy" and "retry" in err.text
                return "busy"
            n += len(e.payload or b"")
            if e.type == "audio-stop":
                await c.disconnect()
                assert n == expect
                return "ok"

    async def http(client: httpx.AsyncClient) -> str:
        r = await client.post(
            "/v1/audio/speech",
            json={
                "model": "tts-1",
                "input": text,
                "voice": "tone",
                "response_format": "pcm",
            },
        )
        if r.status_code == 429:
            assert int(r.headers["Retry-After"]) >= 1
            assert r.json()["error"]["code"] == "busy"
            return "busy"
        assert r.status_code == 200 and len(r.content) == expect * 24000 // 16000
        return "ok"

    async def go() -> list[str]:
        transport = httpx.AsyncHTTPTransport(uds=str(daemon.http))
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://x",
            timeout=60,
            limits=httpx.Limits(max_connections=20),
        ) as client:
            jobs = [wy() for _ in range(10)] + [http(client) for _ in range(10)]
            return await asyncio.wait_for(asyncio.gather(*jobs), 90)

    before = daemon.metrics()
    results = asyncio.run(go())
    assert len(results) == 20
    assert results.count("ok") >= QUEUE + 1 and results.count("busy") >= 1, results
    after = daemon.metrics()
    busy = sum(
        after[f'hexvoice_requests_total{{outcome="busy",protocol="{p}"}}']
        - before[f'hexvoice_requests_total{{outcome="busy",protocol="{p}"}}']
        for p in ("wyoming", "http")
    )
    assert busy == results.count("busy")
    assert after["hexvoice_queue_depth"] == 0


def _cancel_checks(daemon: Daemon, before: dict[str, float], proto: str) -> None:
    took = _wait(lambda: daemon.metrics()["hexvoice_worker_busy"] == 0.0)
    m = daemon.metrics()
    assert m["hexvoice_last_cancel_graph_calls"] <= 1  # stopped within one graph call
    assert m["hexvoice_last_cancel_seconds"] < 0.5
    assert took < 1.0, f"worker still busy {took:.2f} s after the client left"
    key = f'hexvoice_requests_total{{outcome="cancelled",protocol="{proto}"}}'
    assert m[key] == before[key] + 1
    full = LONG_WORDS * 4
    assert (
        m["hexvoice_graph_calls_total"] - before["hexvoice_graph_calls_total"]
        < full / 2
    )


def test_vanishing_wyoming_client_frees_the_worker(daemon: Daemon):
    before = daemon.metrics()
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(daemon.wyoming))
        with s.makefile("rwb") as f:  # the library's blocking reader/writer
            write_event(Synthesize(words(LONG_WORDS)).event(), f)
            while (e := read_event(f)) is not None and e.type != "audio-chunk":
                pass
        # leaving the block closes the socket at once, with audio unread
    _cancel_checks(daemon, before, "wyoming")


def test_vanishing_http_client_frees_the_worker(daemon: Daemon):
    before = daemon.metrics()
    body = {
        "model": "tts-1",
        "input": words(LONG_WORDS),
        "voice": "tone",
        "response_format": "wav",
    }
    with (
        daemon.http_client() as c,
        c.stream("POST", "/v1/audio/speech", json=body) as r,
    ):
        assert r.status_code == 200
        next(r.iter_bytes())
    _cancel_checks(daemon, before, "http")


def test_sighup_reloads_voices_without_dropping_sockets(
    daemon: Daemon, test_voice, tmp_path
):
    second = tmp_path / "tone2"
    shutil.copytree(test_voice.bundle, second)
    manifest = yaml.safe_load((second / "voice.yaml").read_text())
    manifest["name"] = "tone2"
    (second / "voice.yaml").write_text(yaml.safe_dump(manifest))
    original = daemon.config.read_text()
    cfg = yaml.safe_load(original)
    cfg["voices"].append({"bundle": str(second)})
    inode = os.stat(daemon.wyoming).st_ino

    async def names(c: AsyncClient) -> list[str]:
        await c.write_event(Describe().event())
        while (e := await c.read_event()) is not None and e.type != "info":
            pass
        return [v.name for v in Info.from_event(e).tts[0].voices]

    async def go() -> tuple[list[str], list[str]]:
        kept = await _wyoming(daemon)  # open across the reload
        assert await names(kept) == ["tone"]
        daemon.config.write_text(yaml.safe_dump(cfg))
        mark = len(daemon.notify.messages)
        daemon.proc.send_signal(signal.SIGHUP)
        reloading = daemon.notify.wait_for("RELOADING=1", 10, mark)
        ready = daemon.notify.wait_for("READY=1", 30, mark)
        assert ready >= reloading
        after = await names(kept)
        fresh = await _wyoming(daemon)
        await fresh.write_event(Synthesize("from the new voice", voice=None).event())
        await fresh.disconnect()
        await kept.disconnect()
        return after, [x for x in daemon.notify.lines() if x.startswith("STATUS=")]

    try:
        after, statuses = asyncio.run(go())
        assert sorted(after) == ["tone", "tone2"]
        assert os.stat(daemon.wyoming).st_ino == inode
        assert statuses[-1].startswith("STATUS=Ready: 2 voice(s)")
        # A broken file is refused; the service keeps what it has.
        daemon.config.write_text("voices: [\n")
        mark = len(daemon.notify.messages)
        daemon.proc.send_signal(signal.SIGHUP)
        _wait(
            lambda: any("reload refused" in m for _, m in daemon.notify.messages[mark:])
        )
        with daemon.http_client() as h:
            assert sorted(h.get("/health").json()["voices"]) == ["tone", "tone2"]
    finally:
        daemon.config.write_text(original)
        mark = len(daemon.notify.messages)
        daemon.proc.send_signal(signal.SIGHUP)
        daemon.notify.wait_for("READY=1", 30, mark)


def test_sigterm_mid_synthesis_exits_cleanly(daemon_factory):
    d = daemon_factory("term", limits={"max_input_chars": 50_000})

    async def go() -> list[str]:
        c = await _wyoming(d)
        await c.write_event(Synthesize(words(LONG_WORDS)).event())
        while (e := await c.read_event()) is not None and e.type != "audio-chunk":
            pass
        d.proc.send_signal(signal.SIGTERM)
        seen = []
        while (e := await c.read_event()) is not None:
            seen.append(e.type if e.type != "error" else Error.from_event(e).text)
        return seen

    seen = asyncio.run(go())
    assert d.proc.wait(15) == 0
    assert "service stopping" in seen[-1]
    assert "STOPPING=1" in d.notify.lines()
    assert "stop requested: running requests are cancelled" in d.stderr()
    assert not d.wyoming.exists() and not d.http.exists()
    assert "Traceback" not in d.stderr()


@needs_activate
@pytest.mark.parametrize("names", ["wyoming:http", "hexvoice:hexvoice"])
def test_socket_activation(tmp_path_factory, test_voice, names):
    d = start_daemon(tmp_path_factory.mktemp("act"), test_voice, activate=names)
    try:
        _wait(lambda: d.http.exists() and d.wyoming.exists())
        pid = d.proc.pid

        async def go() -> list[str]:
            c = await _wyoming(d)  # the first connection starts the service
            await c.write_event(Describe().event())
            while (e := await c.read_event()) is not None and e.type != "info":
                pass
            await c.disconnect()
            return [v.name for v in Info.from_event(e).tts[0].voices]

        assert asyncio.run(go()) == [test_voice.name]
        d.notify.wait_for("READY=1", 5)
        with d.http_client() as h:
            assert h.get("/health").status_code == 200
        assert "ignoring passed socket" not in d.stderr()
        assert d.proc.pid == pid  # systemd-socket-activate execs the service
        assert d.stop() == 0
        # The sockets belong to whoever passed them: still there.
        assert d.wyoming.exists() and d.http.exists()
        assert "Traceback" not in d.stderr()
    finally:
        if d.proc.poll() is None:
            d.stop(signal.SIGKILL)


def test_a_good_start_and_stop_log_only_progress(daemon_factory):
    """On the simulator: no QNN warnings, native banners or ANSI colours, and
    no warning for the default voice store a checkout does not have."""
    d = daemon_factory("quiet")
    assert d.stop() == 0
    log = d.stderr()
    alarming = [ln for ln in log.splitlines() if not ln.startswith("INFO ")]
    assert alarming == [], log
    assert "cloned voices are off (set voice_store.dir, or --voice-dir DIR" in log


def test_second_instance_refuses_a_busy_socket(daemon: Daemon, test_voice, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(daemon.config.read_text())
    r = _serve(cfg, test_voice)
    assert r.returncode == 70, r.stderr
    assert "another server is listening on" in r.stderr
    # Refused before any model loads: no second NPU load beside the live one.
    assert "loaded in" not in r.stderr and "warmed up" not in r.stderr, r.stderr
    assert daemon.wyoming.exists()  # the running instance's socket is untouched
    with daemon.http_client() as h:
        assert h.get("/health").status_code == 200


def test_stale_socket_file_is_replaced(tmp_path_factory, test_voice):
    tmp = tmp_path_factory.mktemp("stale")
    (tmp / "run").mkdir()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(tmp / "run" / "wyoming.sock"))
    stale.close()  # a file, nobody listening: left by a crash
    d = start_daemon(tmp, test_voice)
    try:
        with d.http_client() as h:
            assert h.get("/health").status_code == 200
    finally:
        assert d.stop() == 0


@pytest.mark.parametrize(
    "content,match",
    [
        ("voices: []\n", "voices: expected a non-empty list"),
        ("voices: [/nonexistent/bundle]\n", "no voice.yaml"),
        ("voices: [x]\nlimits: {queue_size: 0}\n", "queue_size: expected an int"),
        ("voices: [x]\nlisten: {socket_group: no-such-group-xyz}\n", "existing group"),
        ("voices: [x]\nlisten: {tcp_wyoming: 'localhost'}\n", "HOST:PORT"),
        ("voices: [x]\nlisten: {socket_mode: 660}\n", "'0660'"),
        ("voices: [x]\nlimtis: {}\n", "unknown field(s) ['limtis']"),
        ("voices: [\n", "invalid YAML"),
    ],
)
def test_config_errors_exit_78_before_loading(tmp_path, content, match):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(content)
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "daemon.cli", "serve", "--config", str(cfg)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 78
    assert match in r.stderr and str(cfg) in r.stderr
    assert time.monotonic() - t0 < 10


def test_deadlines_mid_stream_and_in_the_queue(daemon_factory):
    d = daemon_factory("deadline", limits={"request_timeout_s": 1.0})
    stalled = "first [[stall:1.6]] never"

    async def wy() -> list[str]:
        c = await _wyoming(d)
        await c.write_event(Synthesize(stalled).event())
        seen = []
        while (e := await c.read_event()) is not None:
            seen.append(e.type)
            if e.type == "error":
                seen.append(Error.from_event(e).code)
                break
        await c.disconnect()
        return seen

    seen = asyncio.run(wy())
    assert seen[0] == "audio-start" and seen[-2:] == ["error", "timeout"]
    assert "audio-stop" not in seen
    body = {"model": "m", "voice": "tone", "response_format": "wav"}
    with d.http_client() as c:
        # Headers are out when the deadline hits: the stream is broken off, so
        # the client cannot take the short audio for a whole answer.
        with pytest.raises(httpx.RemoteProtocolError):
            with c.stream(
                "POST", "/v1/audio/speech", json={**body, "input": stalled}
            ) as r:
                assert r.status_code == 200
                b"".join(r.iter_bytes())
        _wait(lambda: d.metrics()["hexvoice_worker_busy"] == 0.0)

    async def queued() -> tuple[httpx.Response, httpx.Response, float]:
        transport = httpx.AsyncHTTPTransport(uds=str(d.http))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://x", timeout=30
        ) as c:
            url = "/v1/audio/speech"
            blocker = asyncio.create_task(
                c.post(url, json={**body, "input": "[[stall:1.5]] x"})
            )
            await asyncio.sleep(0.2)  # the blocker holds the NPU worker now
            t0 = time.monotonic()
            late = await c.post(url, json={**body, "input": "late"})
            return await blocker, late, time.monotonic() - t0

    # Queued behind a stalled request past its deadline: 504 at the deadline.
    blocker, late, took = asyncio.run(queued())
    assert blocker.status_code == 504 and late.status_code == 504
    assert late.json()["error"]["code"] == "timeout"
    assert took < 1.3
    m = d.metrics()
    assert m['hexvoice_requests_total{outcome="timeout",protocol="http"}'] >= 2
    assert m['hexvoice_requests_total{outcome="timeout",protocol="wyoming"}'] == 1


def _serve(config: Path, voice: ServiceVoice) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daemon.cli", "serve", "--config", str(config)],
        cwd=ROOT,
        env={**os.environ, **voice.env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _garbage_binary(bundle: Path) -> str:
    """Replace the graph's binary by bytes QNN cannot load, hash updated."""
    manifest = yaml.safe_load((bundle / "voice.yaml").read_text())
    g = manifest["graphs"]["mm"]
    (bundle / g["file"]).write_bytes(b"not a context binary\n" * 64)
    g["sha256"] = sha256_file(bundle / g["file"])
    (bundle / "voice.yaml").write_text(yaml.safe_dump(manifest))
    return "not a loadable context binary"


def _flipped(bundle: Path) -> str:
    flip_byte(bundle)
    return "sha256 mismatch"


@pytest.mark.parametrize("break_it", [_flipped, _garbage_binary])
def test_broken_bundle_at_start_exits_78_with_one_line(tmp_path, test_voice, break_it):
    voice = copy_voice(test_voice, tmp_path / "tone")
    why = break_it(voice.bundle)
    r = _serve(write_config(tmp_path / "c.yaml", voice, tmp_path / "run"), voice)
    assert r.returncode == 78, r.stderr
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(errors) == 1, r.stderr
    assert why in errors[0] and str(voice.bundle) in errors[0]


def test_missing_qnn_libraries_exit_78_with_one_line(tmp_path, test_voice):
    empty = tmp_path / "no-qnn-here"
    empty.mkdir()
    config = write_config(
        tmp_path / "c.yaml",
        test_voice,
        tmp_path / "run",
        engine={"backend": "qnn", "qnn_lib_dir": str(empty)},
    )
    r = _serve(config, test_voice)
    assert r.returncode == 78, r.stderr
    assert "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(errors) == 1 and str(empty) in errors[0], r.stderr


def _sigterm_while_loading(d: Daemon, after_s: float) -> None:
    """SIGTERM ``after_s`` into the load: a prompt, clean exit that never said
    READY=1."""
    try:
        _wait(lambda: any(x.startswith("STATUS=Loading") for x in d.notify.lines()))
        time.sleep(after_s)
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        code = d.proc.wait(60)
        took = time.monotonic() - t0
    finally:
        d.stop(signal.SIGKILL)
    log = d.stderr()
    assert code == 0, log
    assert "READY=1" not in d.notify.lines()  # it never claimed to serve
    assert "STOPPING=1" in d.notify.lines()
    assert "stopped while loading" in log and "Traceback" not in log
    # A slow stop (one simulator graph call) has its reason in the log.
    assert "stop requested: the load stops after the graph load or graph call" in log
    assert "tens of seconds on the x86 HTP simulator" in log
    assert took < 1.5, f"exit took {took:.2f} s after SIGTERM"


def test_sigterm_while_loading_stops_within_one_step(tmp_path, test_voice):
    slow = {"calls_per_word": SLOW_WARMUP_CALLS}
    voices = [
        copy_voice(test_voice, tmp_path / f"v{i}", f"tone{i}", **slow)
        for i in range(SLOW_VOICES)
    ]
    d = start_daemon(
        tmp_path / "d",
        voices[0],
        wait_ready=False,
        voices=[{"bundle": str(v.bundle)} for v in voices],
    )
    _sigterm_while_loading(d, 0.5)  # well into the load


def test_sigterm_during_one_long_warm_up_stops_within_one_graph_call(
    tmp_path, test_voice
):
    """One voice whose warm-up alone takes ~20 s on the simulator: the stop does
    not wait for it (every graph call checks the load's checkpoint)."""
    voice = copy_voice(test_voice, tmp_path / "v", calls_per_word=LONG_WARMUP_CALLS)
    d = start_daemon(tmp_path / "d", voice, wait_ready=False)
    _sigterm_while_loading(d, 1.0)  # one binary loads in well under that


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (ConfigError("default_voice 'x' is not one of ['tone']"), 78),
        (BundleError("graphs/mm.bin: sha256 mismatch"), 78),
        (QnnLibraryError("libQnnHtp.so not found"), 78),
        (QnnError(5008, "contextCreateFromBinary"), 78),  # another SoC
        (QnnError(1009, "backendCreate"), 78),  # stub/skel missing
        (QnnError(1007, "contextCreateFromBinary"), 70),  # FastRPC hiccup
        (QnnError(1002, "contextCreateFromBinary"), 70),  # out of memory now
        (RuntimeError("engine bug"), 70),
    ],
)
def test_exit_status_separates_what_a_restart_cannot_fix(exc, code):
    assert exit_status(exc) == code
