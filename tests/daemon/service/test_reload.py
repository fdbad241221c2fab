"""Reloads that fail, reloads during synthesis, and a service left without voices,
seen from outside: ``hexvoice serve`` as a subprocess, real sockets, real sd_notify.

A reload is atomic: the new set is verified and loaded beside the old one (or,
when both do not fit, after freeing it), and on any failure the old set serves
on.  A service with no voice at all is not ready: /health 503, hexvoice_ready 0,
no watchdog pings.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tests.daemon.conftest import (
    SLOW_VOICES,
    SLOW_WARMUP_CALLS,
    Daemon,
    ServiceVoice,
    copy_voice,
    flip_byte,
    start_daemon,
    words,
)
from tests.daemon.vad_engine import write_bundle as write_vad_bundle

#: sd_notify watchdog period given to the daemon; it pings every half of it.
WATCHDOG_USEC = 400_000
PING_S = WATCHDOG_USEC / 2e6
RELOAD_TIMEOUT_S = 30.0
SPEECH = "/v1/audio/speech"


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    """Daemons on any voice, with a watchdog; stopped and checked afterwards."""
    started: list[Daemon] = []

    def make(voice: ServiceVoice, **sections: Any) -> Daemon:
        d = start_daemon(
            tmp_path / f"d{len(started)}",
            voice,
            extra_env={"WATCHDOG_USEC": str(WATCHDOG_USEC)},
            **sections,
        )
        started.append(d)
        return d

    yield make
    for d in started:
        assert d.stop() == 0, d.stderr()
        assert "Traceback" not in d.stderr(), d.stderr()


def point_config_at(d: Daemon, *voices: ServiceVoice) -> None:
    cfg = yaml.safe_load(d.config.read_text())
    cfg["voices"] = [{"bundle": str(v.bundle)} for v in voices]
    d.config.write_text(yaml.safe_dump(cfg))


def set_params(bundle: Path, **params: Any) -> None:
    """A new version of a bundle in place: same path, changed manifest."""
    path = bundle / "voice.yaml"
    manifest = yaml.safe_load(path.read_text())
    manifest["params"].update(params)
    path.write_text(yaml.safe_dump(manifest))


def spawn_many(spawn: Callable[..., Daemon], *voices: ServiceVoice | Path) -> Daemon:
    """A daemon serving every bundle given (a ServiceVoice or a bundle path)."""
    paths = [v if isinstance(v, Path) else v.bundle for v in voices]
    first = next(v for v in voices if isinstance(v, ServiceVoice))
    return spawn(first, voices=[{"bundle": str(p)} for p in paths])


def changes(**kinds: list[str]) -> dict[str, list[str]]:
    """/health's "changes" of a reload: every kind, empty unless given."""
    return {k: kinds.get(k, []) for k in ("added", "reloaded", "kept", "dropped",
                                          "failed")}  # fmt: skip


def sighup(d: Daemon) -> list[str]:
    """Reload and wait for its end (READY=1); the STATUS= lines it sent."""
    mark = len(d.notify.messages)
    d.proc.send_signal(signal.SIGHUP)
    d.notify.wait_for("RELOADING=1", RELOAD_TIMEOUT_S, mark)
    d.notify.wait_for("READY=1", RELOAD_TIMEOUT_S, mark)
    return [
        ln[len("STATUS=") :]
        for _, m in d.notify.messages[mark:]
        for ln in m.split("\n")
        if ln.startswith("STATUS=")
    ]


def speak(d: Daemon, text: str, voice: str = "tone") -> httpx.Response:
    body = {"model": "tts-1", "input": text, "voice": voice, "response_format": "pcm"}
    with d.http_client() as c:
        return c.post(SPEECH, json=body)


def health(d: Daemon) -> httpx.Response:
    with d.http_client() as c:
        return c.get("/health")


def wyoming_errors(d: Daemon) -> list[str]:
    """Error codes for one synthesize and one stream on a single connection."""

    async def go() -> list[str]:
        c = AsyncClient.from_uri(d.uri)
        await c.connect()
        codes = []
        for events in (
            [Synthesize("hello").event()],
            [SynthesizeStart().event(), SynthesizeChunk("hello. ").event(),
             SynthesizeStop().event()],  # fmt: skip
        ):
            for e in events:
                await c.write_event(e)
            while (e := await asyncio.wait_for(c.read_event(), RELOAD_TIMEOUT_S)) and (
                e.type not in ("audio-stop", "synthesize-stopped")
            ):
                if Error.is_type(e.type):
                    codes.append(Error.from_event(e).code)
                    if len(events) == 1:
                        break
        await c.disconnect()
        return codes

    return asyncio.run(go())


def pings_within(d: Daemon, seconds: float) -> int:
    n0 = d.notify.lines().count("WATCHDOG=1")
    time.sleep(seconds)
    return d.notify.lines().count("WATCHDOG=1") - n0


def test_corrupt_bundle_reload_keeps_the_old_voice_serving(spawn, test_voice, tmp_path):
    voice = copy_voice(test_voice, tmp_path / "tone")
    d = spawn(voice)
    before = speak(d, "still the same voice")
    assert before.status_code == 200
    changed = flip_byte(voice.bundle)

    statuses = sighup(d)

    # The old set kept serving, untouched: same audio, byte for byte.
    after = speak(d, "still the same voice")
    assert after.status_code == 200, after.text
    assert after.content == before.content
    h = health(d)
    assert h.status_code == 200
    body = h.json()
    assert body["voices"] == ["tone"]
    assert body["reload"].startswith("failed:")
    assert changed.name in body["reload"] and "sha256 mismatch" in body["reload"]
    m = d.metrics()
    assert m['hexvoice_reloads_total{outcome="failed"}'] == 1
    assert m['hexvoice_reloads_total{outcome="ok"}'] == 0
    assert m["hexvoice_last_reload_success"] == 0
    assert m["hexvoice_ready"] == 1 and m["hexvoice_voices_loaded"] == 1
    assert any("reload failed" in s and "sha256 mismatch" in s for s in statuses)
    assert pings_within(d, 5 * PING_S) >= 3  # still alive for systemd
    log = d.stderr()
    assert "reload failed" in log and "sha256 mismatch" in log

    # Put the byte back: the next reload succeeds and says so everywhere.
    flip_byte(voice.bundle)
    statuses = sighup(d)
    assert statuses[-1].startswith("Ready: 1 voice(s)")
    assert health(d).json()["reload"] == "ok"
    m = d.metrics()
    assert m['hexvoice_reloads_total{outcome="ok"}'] == 1
    assert m["hexvoice_last_reload_success"] == 1


def test_gsv_test_voice_survives_a_reload_of_its_corrupted_bundle(
    spawn, gsv_voice: Path, tmp_path
):
    """The same with the GPT-SoVITS test voice (real pipeline, CPU backend): a
    table its engine reads changes on disk; the loaded voice speaks on, unchanged."""
    root = tmp_path / "gsv"
    shutil.copytree(gsv_voice / "bundle", root)
    manifest = yaml.safe_load((root / "voice.yaml").read_text())
    voice = ServiceVoice(root, manifest["name"], manifest["sample_rate"], {})
    d = spawn(voice, engine={"backend": "cpu"})
    body = {"model": "tts-1", "voice": voice.name, "input": "你好，世界。",
            "response_format": "pcm", "seed": 1}  # fmt: skip

    def say() -> bytes:
        with d.http_client() as c:
            r = c.post(SPEECH, json=body)
        assert r.status_code == 200, r.text
        return r.content

    before = say()
    table = root / "cpu" / "t2s_predict.npy"
    data = bytearray(table.read_bytes())
    data[-3] ^= 0x01
    table.write_bytes(bytes(data))
    statuses = sighup(d)

    assert say() == before
    reload = health(d).json()["reload"]
    assert reload.startswith("failed:") and "cpu/t2s_predict.npy" in reload
    assert any("reload failed" in s for s in statuses)
    assert d.metrics()['hexvoice_reloads_total{outcome="failed"}'] == 1


def test_reload_loads_beside_the_old_set_when_both_fit(spawn, test_voice, tmp_path):
    d = spawn(copy_voice(test_voice, tmp_path / "a"))
    point_config_at(d, copy_voice(test_voice, tmp_path / "b", "tone-b"))
    sighup(d)
    body = health(d).json()
    assert body["voices"] == ["tone-b"]
    assert body["changes"]["added"] == ["tone-b"] == list(body["engines"])
    assert body["changes"]["dropped"] == ["tone"]
    assert "tone-b: added (beside the loaded voices)" in d.stderr()


def test_reload_frees_the_old_set_first_when_both_do_not_fit(
    spawn, test_voice, tmp_path
):
    d = spawn(copy_voice(test_voice, tmp_path / "a", max_loaded=1))
    new = copy_voice(test_voice, tmp_path / "b", "tone-b", max_loaded=1)
    point_config_at(d, new)
    statuses = sighup(d)
    assert statuses[-1].startswith("Ready: 1 voice(s)")
    assert health(d).json()["voices"] == ["tone-b"]
    assert speak(d, "the new voice", "tone-b").status_code == 200
    log = d.stderr()
    assert "only 1 voice(s) fit in memory" in log
    assert "freeing tone first" in log
    assert "tone-b: added (after freeing tone)" in log


def test_failed_reload_after_freeing_restores_the_verified_old_set(
    spawn, test_voice, tmp_path
):
    old = copy_voice(test_voice, tmp_path / "a", max_loaded=1)
    d = spawn(old)
    before = speak(d, "the old voice")
    # Verifies (hashes, graphs), but its engine refuses it at load.
    bad = copy_voice(test_voice, tmp_path / "b", "tone-b", max_loaded=1,
                     calls_per_word="many")  # fmt: skip
    point_config_at(d, bad)
    statuses = sighup(d)
    assert any("reload failed" in s for s in statuses)
    assert health(d).json()["voices"] == ["tone"]
    assert speak(d, "the old voice").content == before.content
    assert "restored the old voices of tone" in d.stderr()


def test_service_without_voices_is_not_ready_and_stops_the_watchdog(
    spawn, test_voice, tmp_path
):
    old = copy_voice(test_voice, tmp_path / "a", max_loaded=1)
    d = spawn(old)
    assert pings_within(d, 5 * PING_S) >= 3
    # The new set needs the old one freed, then fails; the old bundle changed
    # on disk meanwhile, so it cannot come back either.
    bad = copy_voice(test_voice, tmp_path / "b", "tone-b", max_loaded=1,
                     calls_per_word="many")  # fmt: skip
    point_config_at(d, bad)
    flip_byte(old.bundle)
    statuses = sighup(d)

    h = health(d)
    assert h.status_code == 503, h.text
    assert h.json()["voices"] == [] and h.json()["reload"].startswith("failed:")
    assert "no voices" in h.json()["worker"]
    m = d.metrics()
    assert m["hexvoice_ready"] == 0 and m["hexvoice_voices_loaded"] == 0
    r = speak(d, "anyone there?")
    assert r.status_code == 503 and r.json()["error"]["code"] == "unavailable"
    # Wyoming says so too, for a whole text and for a stream, and stays up.
    assert wyoming_errors(d) == ["unavailable", "unavailable"]
    assert any("no voices" in s.lower() for s in statuses), statuses
    time.sleep(PING_S)  # a ping already on its way may still land
    assert pings_within(d, 6 * PING_S) == 0, "watchdog pings went on"
    assert "cannot restore the old voices" in d.stderr()


def test_bundle_swapped_during_a_running_synthesis(spawn, test_voice, tmp_path):
    live = tmp_path / "tone"
    voice = copy_voice(test_voice, live)
    d = spawn(voice, limits={"max_input_chars": 50_000})
    short = speak(d, "short text").content
    text = words(300)
    samples = len(text.split()) * round(0.12 * 24000) * 2  # pcm: 24 kHz int16

    async def go() -> tuple[int, int, httpx.Response, list[str]]:
        transport = httpx.AsyncHTTPTransport(uds=str(d.http))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://x", timeout=60
        ) as c:
            body = {"model": "m", "voice": "tone", "response_format": "pcm"}
            async with c.stream("POST", SPEECH, json={**body, "input": text}) as r:
                got = 0
                async for chunk in r.aiter_bytes():
                    if got == 0:
                        # Replace the bundle directory under the running request.
                        staged = copy_voice(test_voice, tmp_path / "new",
                                            calls_per_word=2)  # fmt: skip
                        live.rename(tmp_path / "old")
                        staged.bundle.rename(live)
                        mark = len(d.notify.messages)
                        d.proc.send_signal(signal.SIGHUP)
                        await asyncio.to_thread(
                            d.notify.wait_for, "RELOADING=1", 10, mark
                        )
                        # Queued behind the running request and the reload.
                        queued = asyncio.create_task(
                            c.post(SPEECH, json={**body, "input": "short text"})
                        )
                    got += len(chunk)
                status = r.status_code
            late = await queued
            await asyncio.to_thread(d.notify.wait_for, "READY=1", 30, mark)
            lines = d.notify.lines()
            return status, got, late, lines

    status, got, late, _ = asyncio.run(go())
    assert status == 200 and got == samples  # the running one finished whole
    assert late.status_code == 200, late.text  # the queued one found its voice:
    # the old engine, as the worker ran it between the reload's verify and load
    # steps (each is its own worker call, FIFO with the requests) ...
    assert late.content == short
    # ... and the new one (2 graph calls per word) from then on.
    assert speak(d, "short text").content != short
    assert health(d).json()["reload"] == "ok"


def test_sigterm_during_a_reload_stops_it_and_exits(spawn, test_voice, tmp_path):
    d = spawn(copy_voice(test_voice, tmp_path / "a"))
    slow = {"calls_per_word": SLOW_WARMUP_CALLS}
    voices = [
        copy_voice(test_voice, tmp_path / f"v{i}", f"tone{i}", **slow)
        for i in range(SLOW_VOICES)
    ]
    point_config_at(d, *voices)
    mark = len(d.notify.messages)
    d.proc.send_signal(signal.SIGHUP)
    d.notify.wait_for("RELOADING=1", RELOAD_TIMEOUT_S, mark)
    time.sleep(0.5)  # well into the new set's warm-ups
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    code = d.proc.wait(60)
    took = time.monotonic() - t0
    assert code == 0 and took < 1.5, f"exit {code} {took:.2f} s after SIGTERM"
    assert "reload abandoned" in d.stderr()


def test_sighup_reloads_only_the_changed_bundle(
    spawn, test_voice, bins, onnx_dir, tmp_path
):
    """Three engines of two tasks; one bundle changes.  The other two are the very
    engines that served before: no graph load, no warm-up, their graph-call
    counts go on; a request in flight on one of them streams on untouched."""
    a = copy_voice(test_voice, tmp_path / "a")
    b = copy_voice(test_voice, tmp_path / "b", "tone-b")
    mm = bins["matmul_tanh"].bin_path
    vad = write_vad_bundle(tmp_path / "vad", mm, onnx_dir / "matmul_tanh.onnx")
    d = spawn_many(spawn, a, b, vad)
    text = words(200)
    before_a = speak(d, "hello there").content
    before_b = speak(d, text, "tone-b").content
    engines0 = health(d).json()["engines"]
    set_params(a.bundle, calls_per_word=2)

    async def during_reload() -> bytes:
        transport = httpx.AsyncHTTPTransport(uds=str(d.http))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://x", timeout=60
        ) as c:
            body = {"model": "m", "voice": "tone-b", "response_format": "pcm"}
            got, mark = b"", len(d.notify.messages)
            async with c.stream("POST", SPEECH, json={**body, "input": text}) as r:
                async for chunk in r.aiter_bytes():
                    if not got:
                        d.proc.send_signal(signal.SIGHUP)
                    got += chunk
            await asyncio.to_thread(d.notify.wait_for, "READY=1", 30, mark)
            return got

    assert asyncio.run(during_reload()) == before_b  # in flight: not disturbed
    h = health(d).json()
    assert h["reload"] == "ok"
    assert h["changes"] == changes(reloaded=["tone"], kept=["tone-b", "vad"])
    engines = h["engines"]
    assert list(engines) == ["tone", "tone-b", "vad"]  # config order
    assert engines["tone"]["load"] != engines0["tone"]["load"]  # a new engine
    for kept in ("tone-b", "vad"):
        assert engines[kept]["load"] == engines0[kept]["load"]  # the same engine
    # Counted on, not reset: 200 words at 4 graph calls each, during the reload.
    assert engines["tone-b"]["graph_calls"] == engines0["tone-b"]["graph_calls"] + 800
    assert engines["vad"]["graph_calls"] == engines0["vad"]["graph_calls"]
    assert speak(d, "hello there").content != before_a  # the new version speaks
    assert speak(d, text, "tone-b").content == before_b
    log = d.stderr()
    assert log.count("tone: engine test-tone loaded and warmed up") == 2
    assert log.count("tone-b: engine test-tone loaded and warmed up") == 1
    assert log.count("vad: engine test-vad loaded and warmed up") == 1
    assert "voices: reloaded tone; kept tone-b, vad" in log


def test_removed_voice_is_dropped_and_added_one_loads_beside_the_rest(
    spawn, test_voice, tmp_path
):
    # Two tone engines fit at once: the third loads only if the drop freed one.
    a = copy_voice(test_voice, tmp_path / "a", max_loaded=2)
    b = copy_voice(test_voice, tmp_path / "b", "tone-b", max_loaded=2)
    d = spawn_many(spawn, a, b)
    before = speak(d, "hello there").content
    tone0 = health(d).json()["engines"]["tone"]

    point_config_at(d, a)
    statuses = sighup(d)
    h = health(d).json()
    assert h["voices"] == ["tone"]
    assert h["changes"] == changes(kept=["tone"], dropped=["tone-b"])
    assert h["engines"] == {"tone": tone0}  # the same engine, untouched
    r = speak(d, "hello there", "tone-b")
    assert r.status_code == 400 and r.json()["error"]["code"] == "voice_not_found"
    assert speak(d, "hello there").content == before
    assert statuses[-1].startswith("Ready: 1 voice(s)")
    assert d.metrics()["hexvoice_voices_loaded"] == 1
    assert "tone-b: evicted" in d.stderr()

    c = copy_voice(test_voice, tmp_path / "c", "tone-c", max_loaded=2)
    point_config_at(d, a, c)
    sighup(d)
    h = health(d).json()
    assert h["voices"] == ["tone", "tone-c"]
    assert h["changes"] == changes(added=["tone-c"], kept=["tone"])
    assert h["engines"]["tone"]["load"] == tone0["load"]
    assert speak(d, "hello there", "tone-c").content == before  # same bundle content
    log = d.stderr()
    assert "tone-c: added (beside the loaded voices)" in log
    assert "fit in memory" not in log  # tone-b's engine was really closed
    m = d.metrics()
    assert m['hexvoice_reloads_total{outcome="ok"}'] == 2
    assert m["hexvoice_voices_loaded"] == 2


def test_corrupt_new_bundle_fails_alone(spawn, test_voice, tmp_path):
    """A new version of one bundle is corrupt: that one fails and its old engine
    serves on; the others' changes happen; nothing is dropped (the reload failed)."""
    a = copy_voice(test_voice, tmp_path / "a")
    b = copy_voice(test_voice, tmp_path / "b", "tone-b")
    gone = copy_voice(test_voice, tmp_path / "gone", "tone-gone")
    d = spawn_many(spawn, a, b, gone)
    before_a = speak(d, "hello there").content
    before_b = speak(d, "hello there", "tone-b").content
    engines0 = health(d).json()["engines"]
    set_params(b.bundle, calls_per_word=2)
    broken = flip_byte(b.bundle)
    c = copy_voice(test_voice, tmp_path / "c", "tone-c")
    point_config_at(d, a, b, c)

    statuses = sighup(d)
    h = health(d).json()
    assert h["status"] == "ok"
    assert h["reload"].startswith("failed:") and "sha256 mismatch" in h["reload"]
    assert broken.name in h["reload"]
    assert h["changes"] == changes(
        added=["tone-c"], kept=["tone", "tone-gone"], failed=["tone-b"]
    )
    assert h["voices"] == ["tone", "tone-b", "tone-c", "tone-gone"]
    assert h["engines"]["tone"] == engines0["tone"]
    assert h["engines"]["tone-b"] == engines0["tone-b"]  # the old one, untouched
    assert speak(d, "hello there").content == before_a
    assert speak(d, "hello there", "tone-b").content == before_b
    assert speak(d, "hello there", "tone-c").status_code == 200
    assert speak(d, "hello there", "tone-gone").status_code == 200
    assert any("reload failed" in s and "sha256 mismatch" in s for s in statuses)
    m = d.metrics()
    assert m['hexvoice_reloads_total{outcome="failed"}'] == 1
    assert m["hexvoice_last_reload_success"] == 0
    assert m["hexvoice_voices_loaded"] == 4
    assert "tone-gone: left the config, kept: the reload failed" in d.stderr()

    # Fixed: the next reload brings the new tone-b and drops what left the config.
    flip_byte(b.bundle)
    sighup(d)
    h = health(d).json()
    assert h["reload"] == "ok"
    assert h["changes"] == changes(
        reloaded=["tone-b"], kept=["tone", "tone-c"], dropped=["tone-gone"]
    )
    assert speak(d, "hello there", "tone-b").content != before_b
