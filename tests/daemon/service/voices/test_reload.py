"""Reloads that fail, reloads during synthesis, and a service left without voices,
seen from outside: ``hexvoice serve`` as a subprocess, real sockets, real sd_notify.

A reload is atomic, engine by engine (test_reload_engines.py has the rest):
every bundle is verified first, a new engine loads beside the old ones (or,
when both do not fit, after freeing the one it replaces or ones the config
drops), and on any failure the old engine serves on.  A service with no voice
at all is not ready: /health 503, hexvoice_ready 0, no watchdog pings.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

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
    words,
)
from tests.daemon.service.reloads import (
    PING_S,
    RELOAD_TIMEOUT_S,
    SPEECH,
    daemons,
    health,
    point_config_at,
    sighup,
    speak,
)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    yield from daemons(tmp_path)


def wyoming_errors(d: Daemon) -> list[str]:
    """Error codes for one synthesize and one stream on a single connection."""

    async def go() -> list[str]:
        c = AsyncClient.from_uri(d.uri)
        await c.connect()
        codes = []
        for events in (
            [Synthesize("hello").event()],
            [
                SynthesizeStart().event(),
                SynthesizeChunk("hello. ").event(),
                SynthesizeStop().event(),
            ],  # fmt: skip
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
