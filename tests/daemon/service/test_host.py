"""The engine host in-process: admission, turns, cancellation, deadlines, health,
reload and shutdown, with the real NPU worker and a real graph."""

from __future__ import annotations

import asyncio
import errno
import os
import time
from dataclasses import replace

import pytest

from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import Cancelled
from daemon.service.config import ConfigError, LimitsConfig, ServeConfig, VoiceSource
from daemon.service.edge.refusals import Busy, Unavailable
from daemon.service.edge.requests import SynthesisRequest
from daemon.service.host import EngineHost
from daemon.service.voices.voice import Voice
from daemon.service.voices.voiceset import no_room
from qnnrt import QnnError
from tests.daemon.conftest import LONG_WORDS, copy_voice, flip_byte, words
from tests.daemon.service.hosts import loaded_host, with_limits

LONG_TEXT_CHARS = 50_000
#: How long a stalled word holds the worker (s): twice the 0.3 s deadline the
#: request queued behind it must be told of.
HOLD_S = 0.6


@pytest.fixture
def cfg(test_voice, monkeypatch) -> ServeConfig:
    # Register the tone engine for this process (entry points scan sys.path).
    monkeypatch.syspath_prepend(test_voice.env["PYTHONPATH"].split(os.pathsep)[0])
    # LONG_WORDS requests are longer than the default text limit.
    limits = replace(LimitsConfig(), max_input_chars=LONG_TEXT_CHARS)
    return ServeConfig(voices=(VoiceSource(test_voice.bundle),), limits=limits)


async def _drain(job) -> int:  # noqa: ANN001
    return sum([len(c.audio) async for c in job])


def _req(text: str, voice: Voice) -> SynthesisRequest:
    return SynthesisRequest(text, voice.name)


def _requests(host: EngineHost, outcome: str) -> float | None:
    labels = {"protocol": "test", "outcome": outcome}
    return host.metrics.registry.get_sample_value("hexvoice_requests_total", labels)


def test_every_engine_call_runs_on_the_npu_worker(cfg):
    async def go() -> list[tuple[str, str]]:
        host = await loaded_host(cfg)
        engine = host._set.engines[0]  # noqa: SLF001 - the test engine's call log
        await _drain(host.submit(_req("a b c", host.resolve()), "test"))
        await host.close()
        return engine.calls

    calls = asyncio.run(go())
    assert [m for m, _ in calls] == [
        "load",
        "warmup",
        "synthesize",
        "synthesize",
        "close",
    ]
    assert {t for _, t in calls} == {"npu"}


def test_full_queue_is_busy_and_jobs_take_turns(cfg):
    async def go() -> tuple[list[int], list[int], int]:
        host = await loaded_host(with_limits(cfg, queue_size=1))
        v = host.resolve()
        first = host.submit(_req(words(40, "a"), v), "test")
        second = host.submit(_req(words(20, "b"), v), "test")
        with pytest.raises(Busy) as info:
            host.submit(_req("c", v), "test")
        started: list[int] = []
        ended: list[int] = []

        async def take(job, tag):  # noqa: ANN001, ANN202
            async for _ in job:
                if tag not in started:
                    started.append(tag)
            ended.append(tag)

        await asyncio.gather(take(second, 2), take(first, 1))
        third = host.submit(_req("now there is room", v), "test")
        await _drain(third)
        await host.close()
        return started, ended, info.value.retry_after

    started, ended, retry = asyncio.run(go())
    # Started in arrival order, then a word each in turn: the shorter one ends
    # first, though it came second.
    assert started == [1, 2] and ended == [2, 1] and retry >= 1


def test_cancelled_before_start_is_skipped(cfg):
    async def go() -> tuple[int, int, str]:
        host = await loaded_host(cfg)
        v = host.resolve()
        long = host.submit(_req(words(LONG_WORDS), v), "test")
        waiting = host.submit(_req(words(500, "w"), v), "test")
        host.cancel(waiting, "client disconnected")
        calls_before = host.graph_calls()
        host.cancel(long, "client disconnected")
        with pytest.raises(Cancelled):
            await _drain(long)
        with pytest.raises(Cancelled, match="client disconnected"):
            await _drain(waiting)
        calls = host.graph_calls() - calls_before
        await host.close()
        lag = host.metrics.registry.get_sample_value("hexvoice_last_cancel_graph_calls")
        return calls, _requests(host, "cancelled"), lag

    calls, cancelled, lag = asyncio.run(go())
    assert calls <= 1 and lag <= 1  # the running one stopped within one call
    assert cancelled == 2


def test_deadline_while_queued_is_reported_at_the_deadline(cfg):
    async def go() -> float:
        host = await loaded_host(with_limits(cfg, request_timeout_s=0.3))
        v = host.resolve()
        # A stalled word holds the worker in one item (a long text would take
        # turns with the late one, which would then end in time).
        long = host.submit(_req(f"[[stall:{HOLD_S}]] {words(LONG_WORDS)}", v), "test")
        late = host.submit(_req("behind the long one", v), "test")
        t0 = time.monotonic()
        with pytest.raises(Cancelled, match="deadline passed"):
            await _drain(late)
        took = time.monotonic() - t0
        with pytest.raises(Cancelled):
            await _drain(long)
        await host.close()
        assert _requests(host, "timeout") == 2
        return took

    assert asyncio.run(go()) < 0.6


def test_stalled_engine_step_is_unhealthy(cfg):
    async def go() -> list[tuple[bool, str]]:
        host = await loaded_host(with_limits(cfg, stall_timeout_s=0.2))
        job = host.submit(_req("a [[stall:0.6]] b", host.resolve()), "test")
        seen = [host.health()]
        await asyncio.sleep(0.4)
        seen.append(host.health())
        await _drain(job)
        seen.append(host.health())  # healthy again at once...
        for _ in range(100):  # ...and idle once the worker finished its cleanup
            if host.health()[1] == "idle":
                break
            await asyncio.sleep(0.02)
        seen[-1] = (seen[-1][0], host.health()[1])
        await host.close()
        return seen

    (ok1, _), (ok2, why), (ok3, idle) = asyncio.run(go())
    assert ok1 and not ok2 and "stuck" in why and ok3 and idle == "idle"


def test_failed_reload_keeps_serving_the_old_voices(cfg):
    async def go() -> int:
        host = await loaded_host(cfg)
        with pytest.raises(ConfigError, match="default_voice 'nope'"):
            await host.load(replace(cfg, default_voice="nope"))
        n = await _drain(host.submit(_req("still works", host.resolve()), "test"))
        await host.close()
        return n

    assert asyncio.run(go()) > 0


def test_closed_host_refuses_and_its_worker_is_gone(cfg):
    async def go() -> EngineHost:
        host = await loaded_host(cfg)
        await host.close()
        with pytest.raises(Unavailable, match="closed"):
            host.submit(_req("x", next(iter(host.voices.values()))), "test")
        return host

    host = asyncio.run(go())
    assert not host._worker.thread.is_alive()  # noqa: SLF001
    assert host._set is None  # noqa: SLF001 - QNN freed on the worker


def test_failed_reload_leaves_the_old_set_untouched(cfg, test_voice, tmp_path):
    voice = copy_voice(test_voice, tmp_path / "tone")
    cfg = replace(cfg, voices=(VoiceSource(voice.bundle),))

    async def go() -> tuple[object, object, list[str], int]:
        host = await loaded_host(cfg)
        old = host._set  # noqa: SLF001 - the very object that serves
        flip_byte(voice.bundle)
        with pytest.raises(BundleError, match="sha256 mismatch"):
            await host.load(cfg)
        now = host._set  # noqa: SLF001
        calls = [m for m, _ in old.engines[0].calls]
        n = await _drain(host.submit(_req("still works", host.resolve()), "test"))
        await host.close()
        return old, now, calls, n

    old, now, calls, n = asyncio.run(go())
    assert now is old  # not closed and re-read from the changed files
    assert "close" not in calls and n > 0


def _caused(exc: Exception, cause: Exception) -> Exception:
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(
    ("exc", "retry"),
    [
        (MemoryError("rpcmem_alloc(1048576) failed"), True),
        (QnnError(1002, "contextCreateFromBinary"), True),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), True),
        (_caused(RuntimeError("engine load failed"), MemoryError()), True),
        (RuntimeError("engine load failed"), False),
        (QnnError(5005, "contextCreateFromBinary"), False),
        (BundleError("graphs/mm.bin: sha256 mismatch"), False),
        (ValueError("invalid literal for int()"), False),
    ],
)
def test_only_lack_of_room_frees_the_old_set_first(exc, retry):
    assert no_room(exc) is retry
