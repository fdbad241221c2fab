"""Fairness of transcription sessions on the one NPU worker (sessions.py): each
step is its own worker item, so speech and other engines' sessions run between
a session's steps, while one engine never has two sessions open at once.  Real
worker, real loop, the ``test-vad`` and test-tone engines on a real graph."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

import numpy as np
import pytest

from daemon.service.config import LimitsConfig, ServeConfig, VoiceSource
from daemon.service.edge.requests import SynthesisRequest, TranscriptionRequest
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import AsrJob, Job
from tests.daemon.conftest import words
from tests.daemon.sdk.test_asr import BURST_FINALS, BURSTS
from tests.daemon.service.hosts import loaded_host
from tests.daemon.vad_engine import burst_signal, write_bundle

RATE = 16000
CHUNK = 1600  # 0.1 s
#: The long session: the burst signal this many times over (2.5 s each).
LONG_REPEATS = 8
#: Words of the speech request spoken during it.
SPOKEN_WORDS = 40


@pytest.fixture
def cfg(test_voice, bins, onnx_dir, tmp_path, monkeypatch) -> ServeConfig:
    """The tone voice and two VAD bundles (two engines of one kind)."""
    monkeypatch.syspath_prepend(test_voice.env["PYTHONPATH"].split(os.pathsep)[0])
    mm = (bins["matmul_tanh"].bin_path, onnx_dir / "matmul_tanh.onnx")
    vads = [write_bundle(tmp_path / n, *mm, name=n) for n in ("vad", "vad2")]
    sources = (VoiceSource(test_voice.bundle), *map(VoiceSource, vads))
    return ServeConfig(voices=sources, limits=replace(LimitsConfig(), queue_size=8))


def _session(host: EngineHost, model: str = "vad") -> AsrJob:
    return host.open_session(TranscriptionRequest(model, sample_rate=RATE), "test")


def _say(host: EngineHost, text: str) -> Job:
    return host.submit(SynthesisRequest(text, "tone"), "test")


def _chunks(pcm: np.ndarray) -> list[np.ndarray]:
    return [pcm[i : i + CHUNK] for i in range(0, len(pcm), CHUNK)]


def _calls(host: EngineHost, name: str) -> list[str]:
    loaded = host._set.loaded[name]  # noqa: SLF001 - the engine's own call log
    return [m for m, _ in loaded.engine.calls]


async def _feed_all(job: AsrJob, pcm: np.ndarray, pace_s: float = 0.0) -> None:
    for chunk in _chunks(pcm):
        await job.feed(chunk)
        await asyncio.sleep(pace_s)
    job.finish()


async def _finals(job: AsrJob) -> list[str]:
    return [t.text async for t in job if t.final]


def test_speech_finishes_while_a_long_session_runs(cfg):
    long = burst_signal(BURSTS * LONG_REPEATS, RATE)

    async def go() -> tuple[int, int, bool, list[str], int]:
        host = await loaded_host(cfg)
        session = _session(host)
        feeder = asyncio.create_task(_feed_all(session, long))
        heard = asyncio.create_task(_finals(session))
        while _calls(host, "vad").count("feed") < 3:  # the session is under way
            await asyncio.sleep(0.005)
        spoken = _say(host, words(SPOKEN_WORDS))
        samples = sum([len(c.audio) async for c in spoken])
        feeds_then, open_then = _calls(host, "vad").count("feed"), not session.done
        await feeder
        finals = await heard
        total = _calls(host, "vad").count("feed")
        await host.close()
        return feeds_then, total, open_then, finals, samples

    feeds_then, total, open_then, finals, samples = asyncio.run(go())
    assert samples > 0 and open_then  # spoken before the session ended
    assert feeds_then < total  # ... between two of its feeds
    assert len(finals) == 2 * LONG_REPEATS and finals[:2] == BURST_FINALS


def test_two_sessions_of_one_engine_never_interleave_and_go_in_order(cfg):
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> tuple[list[str], list[list[str]], list[str]]:
        host = await loaded_host(cfg)
        jobs = [_session(host) for _ in range(3)]
        ended: list[int] = []

        async def run(i: int, job: AsrJob) -> list[str]:
            feeder = asyncio.create_task(_feed_all(job, pcm, pace_s=0.002))
            finals = await _finals(job)
            await feeder
            ended.append(i)
            return finals

        # the last-asked session is fed first: it still waits for its turn
        results = await asyncio.gather(*(run(i, j) for i, j in reversed(list(
            enumerate(jobs)))))  # fmt: skip
        calls = _calls(host, "vad")
        await host.close()
        return calls, results, [str(i) for i in ended]

    calls, results, ended = asyncio.run(go())
    warm = calls[calls.index("warmup") :]
    sessions = warm[warm.index("finish") + 1 :]  # after the warm-up's own session
    # each open is followed by that session's feeds and finish, then the next
    opens = [i for i, m in enumerate(sessions) if m == "open"]
    assert len(opens) == 3
    for start, end in zip(opens, [*opens[1:], len(sessions)]):
        assert sessions[start + 1 : end].count("finish") == 1
        assert sessions[end - 1] == "finish"
    assert ended == ["0", "1", "2"]  # first asked, first served
    assert all(finals == BURST_FINALS for finals in results)


def test_a_session_of_another_engine_runs_while_one_is_open(cfg):
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> tuple[list[str], list[str]]:
        host = await loaded_host(cfg)
        a = _session(host, "vad")
        heard_a = asyncio.create_task(_finals(a))
        await a.feed(pcm[:CHUNK])  # open, and left waiting for more audio
        b = _session(host, "vad2")
        await _feed_all(b, pcm)
        heard_b = await asyncio.wait_for(_finals(b), 10)  # whole, while a is open
        assert not a.done
        for chunk in _chunks(pcm)[1:]:
            await a.feed(chunk)
        a.finish()
        result = await heard_a, heard_b
        await host.close()
        return result

    heard_a, heard_b = asyncio.run(go())
    assert heard_a == heard_b == BURST_FINALS


def test_a_reload_waits_for_the_open_session_and_then_serves(cfg):
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> tuple[bool, list[str], list[str]]:
        host = await loaded_host(cfg)
        session = _session(host)
        await session.feed(pcm[:CHUNK])
        reload = asyncio.create_task(host.reload_engine("vad"))
        await asyncio.sleep(0.3)
        waited = not reload.done()  # the engine is not closed under the session
        for chunk in _chunks(pcm)[1:]:
            await session.feed(chunk)
        session.finish()
        before = await _finals(session)
        await reload
        after = _session(host)  # the reloaded engine
        await _feed_all(after, pcm)
        again = await _finals(after)
        await host.close()
        return waited, before, again

    waited, before, again = asyncio.run(go())
    assert waited and before == again == BURST_FINALS


def test_a_session_fed_steadily_outlives_the_request_timeout(cfg):
    pcm = burst_signal(BURSTS, RATE)  # 2.5 s of audio, fed over about 1.5 s
    cfg = replace(cfg, limits=replace(cfg.limits, request_timeout_s=0.5))

    async def go() -> list[str]:
        host = await loaded_host(cfg)
        job = _session(host)
        feeder = asyncio.create_task(_feed_all(job, pcm, pace_s=0.06))
        finals = await _finals(job)
        await feeder
        await host.close()
        return finals

    finals = asyncio.run(go())
    assert finals == BURST_FINALS  # never idle for request_timeout_s


def test_speech_runs_between_the_items_of_one_feed(cfg):
    long = burst_signal(BURSTS * LONG_REPEATS, RATE)  # one feed, many transcripts

    async def go() -> tuple[int, int, int, int]:
        host = await loaded_host(cfg)
        warm = _calls(host, "vad").count("feed")  # the warm-up's
        session = _session(host)
        await session.feed(long)
        session.finish()
        items = session.__aiter__()
        await items.__anext__()  # the feed's first transcript: it is under way
        feeds = _calls(host, "vad").count("feed") - warm
        speech, heard_then, spoken = _say(host, words(SPOKEN_WORDS)), 0, 0
        async for chunk in speech:
            # made so far when the speech is heard (it then takes turns with
            # the session's items, a word at a time)
            heard_then = heard_then or 1 + session._queue.qsize()  # noqa: SLF001
            spoken += len(chunk.audio)
        rest = [t async for t in items]
        await host.close()
        return feeds, heard_then, 1 + len(rest), spoken

    feeds, heard_then, total, spoken = asyncio.run(go())
    assert feeds == 1 and spoken > 0  # spoken within the one feed ...
    assert heard_then < total  # ... before its last transcript was made


def test_a_session_waiting_for_its_turn_counts_in_the_bound(cfg):
    from daemon.service.edge.refusals import Busy

    cfg = replace(cfg, limits=replace(cfg.limits, queue_size=1))
    pcm = burst_signal(BURSTS, RATE)

    async def go() -> tuple[bool, list[str], list[str]]:
        host = await loaded_host(cfg)
        first, second = _session(host), _session(host)  # second: waits its turn
        with pytest.raises(Busy):
            _session(host, "vad2")  # no room, though vad2 is free
        await asyncio.sleep(0.2)
        waited = not second.running  # not opened while the first is open
        feeders = [asyncio.create_task(_feed_all(j, pcm)) for j in (first, second)]
        heard = await asyncio.gather(_finals(first), _finals(second))
        await asyncio.gather(*feeders)
        await host.close()
        return waited, *heard

    waited, heard_first, heard_second = asyncio.run(go())
    assert waited and heard_first == heard_second == BURST_FINALS
