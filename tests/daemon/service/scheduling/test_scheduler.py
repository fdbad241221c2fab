"""Transcription sessions through the engine host, beside synthesis: the same
bounded FIFO queue, Busy answer, deadline and cancellation, with the real NPU
worker, the real asyncio loop and the ``test-vad`` engine on a real graph."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace

import numpy as np
import pytest

from daemon.sdk.asr import SessionFinished
from daemon.sdk.cancel import Cancelled
from daemon.service.config import LimitsConfig, ServeConfig, VoiceSource
from daemon.service.edge.refusals import BadRequest, BadValue, Busy
from daemon.service.edge.requests import SynthesisRequest, TranscriptionRequest
from daemon.service.host import EngineHost
from daemon.service.scheduling.jobs import INPUT_CHUNKS, AsrJob, Job
from tests.daemon.conftest import LONG_WORDS, words
from tests.daemon.sdk.test_asr import BURST_FINALS, BURSTS
from tests.daemon.service.hosts import loaded_host, with_limits
from tests.daemon.vad_engine import MAX_AUDIO_S, burst_signal, write_bundle

RATE = 16000
CHUNK = 1600  # 0.1 s
LONG_TEXT_CHARS = 50_000
VAD = "vad"
#: A cancelled session waiting for audio ends within this (s).
WAKE_S = 1.0
#: How long a stalled word holds the worker (s): past the 0.3 s a feed is
#: watched for, with room for a slow machine.
HOLD_S = 1.0


@pytest.fixture
def cfg(test_voice, bins, onnx_dir, tmp_path, monkeypatch) -> ServeConfig:
    # Both test engines registered for this process (entry points scan sys.path).
    monkeypatch.syspath_prepend(test_voice.env["PYTHONPATH"].split(os.pathsep)[0])
    vad = write_bundle(
        tmp_path / "vad", bins["matmul_tanh"].bin_path, onnx_dir / "matmul_tanh.onnx"
    )
    limits = replace(LimitsConfig(), max_input_chars=LONG_TEXT_CHARS)
    sources = (VoiceSource(test_voice.bundle), VoiceSource(vad))
    return ServeConfig(voices=sources, limits=limits)


def _session(host: EngineHost) -> AsrJob:
    return host.open_session(TranscriptionRequest(VAD, sample_rate=RATE), "test")


def _say(host: EngineHost, text: str) -> Job:
    return host.submit(SynthesisRequest(text, host.resolve().name), "test")


def _chunks(pcm: np.ndarray) -> list[np.ndarray]:
    return [pcm[i : i + CHUNK] for i in range(0, len(pcm), CHUNK)]


async def _transcribe(job: AsrJob, pcm: np.ndarray) -> list:
    async def feed() -> None:
        for chunk in _chunks(pcm):
            await job.feed(chunk)
        job.finish()

    feeder = asyncio.create_task(feed())
    seen = [t async for t in job]
    await feeder
    return seen


def _engine_calls(host: EngineHost, task: str) -> list[tuple[str, str]]:
    (engine,) = [e for e in host._set.engines if e.task == task]  # noqa: SLF001
    return engine.calls


def _requests(host: EngineHost, outcome: str) -> float | None:
    labels = {"protocol": "test", "outcome": outcome}
    return host.metrics.registry.get_sample_value("hexvoice_requests_total", labels)


async def _ended(job: Job, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not job.done:
        assert time.monotonic() < end, "the job did not end"
        await asyncio.sleep(0.01)


def test_partials_then_finals_through_the_host_on_the_npu_worker(cfg):
    async def go() -> tuple[list, list[tuple[str, str]], object]:
        host = await loaded_host(cfg)
        voice = host.voices[VAD]
        seen = await _transcribe(_session(host), burst_signal(BURSTS, RATE))
        calls = list(_engine_calls(host, "asr"))
        await host.close()
        return seen, calls, voice

    seen, calls, voice = asyncio.run(go())
    assert voice.task == "asr" and voice.capabilities.max_input == MAX_AUDIO_S
    assert [t.text for t in seen if t.final] == BURST_FINALS
    first_final = next(i for i, t in enumerate(seen) if t.final)
    assert first_final >= 3 and not any(t.final for t in seen[:first_final])
    methods = [m for m, _ in calls]
    assert methods[:2] == ["load", "warmup"] and methods[-1] == "finish"
    assert methods.count("open") == 2  # warm-up and this session
    assert {t for _, t in calls} == {"npu"}


def test_a_session_holds_its_place_in_the_one_bounded_queue(cfg):
    async def go() -> tuple[bool, bool, list, int, int]:
        host = await loaded_host(with_limits(cfg, queue_size=1))
        session = _session(host)  # open: waits for its audio, the worker is free
        spoken = _say(host, "beside the session")
        with pytest.raises(Busy) as busy:
            _session(host)  # the session + queue_size others: full
        with pytest.raises(Busy):
            _say(host, "no room")
        samples = sum([len(c.audio) async for c in spoken])
        between = not session.done  # spoken while the session stayed open
        for chunk in _chunks(burst_signal(BURSTS, RATE)):
            await session.feed(chunk)
        again = _say(host, "room again")  # the speech left: room for one
        session.finish()
        seen = [t async for t in session]
        samples += sum([len(c.audio) async for c in again])
        await host.close()
        return between, spoken.done, seen, samples, busy.value.retry_after

    between, spoken, seen, samples, retry = asyncio.run(go())
    assert between and spoken  # the speech did not wait for the session's end
    assert [t.text for t in seen if t.final] == BURST_FINALS
    assert samples > 0 and retry >= 1


def test_cancel_between_feeds_stops_after_at_most_one_more_feed(cfg):
    async def go() -> tuple[int, int, float | None]:
        host = await loaded_host(cfg)
        job = _session(host)
        pcm = burst_signal(BURSTS, RATE)
        calls = _engine_calls(host, "asr")
        for chunk in _chunks(pcm)[:10]:
            await job.feed(chunk)  # queued at once: the worker takes them
        host.cancel(job, "client disconnected")
        feeds_at_cancel = [m for m, _ in calls].count("feed")
        with pytest.raises(Cancelled, match="client disconnected"):
            async for _ in job:
                pass
        with pytest.raises(Cancelled, match="client disconnected"):
            await job.feed(pcm[:CHUNK])  # the session is over for its client
        feeds = [m for m, _ in calls].count("feed")
        await host.close()
        return feeds_at_cancel, feeds, _requests(host, "cancelled")

    at_cancel, after, cancelled = asyncio.run(go())
    assert after - at_cancel <= 1 and cancelled == 1


def test_a_session_waiting_for_audio_wakes_at_once_when_cancelled(cfg):
    async def go() -> float:
        host = await loaded_host(cfg)
        job = _session(host)
        await job.feed(np.zeros(CHUNK, np.float32))
        await asyncio.sleep(0.2)  # the worker now waits for more audio
        t0 = time.monotonic()
        host.cancel(job, "client disconnected")
        await _ended(job)
        took = time.monotonic() - t0
        n = sum([len(c.audio) async for c in _say(host, "the worker is free")])
        assert n > 0
        await host.close()
        return took

    assert asyncio.run(go()) < WAKE_S  # the cancel woke it


@pytest.mark.parametrize("how", ["task cancelled", "loop left"])
def test_the_consumer_leaving_cancels_the_session(cfg, how):
    async def go() -> tuple[str, float | None]:
        host = await loaded_host(cfg)
        job = _session(host)
        pcm = burst_signal(BURSTS, RATE)
        for chunk in _chunks(pcm)[:12]:  # up to the first partials
            await job.feed(chunk)

        async def consume() -> None:
            async for _ in job:
                if how == "loop left":
                    break

        reader = asyncio.create_task(consume())
        if how == "task cancelled":
            await asyncio.sleep(0.3)  # reading, waiting for more
            reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await _ended(job)
        reason = job.token.reason
        await host.close()
        return reason, _requests(host, "cancelled")

    reason, cancelled = asyncio.run(go())
    assert reason == "the consumer stopped reading" and cancelled == 1


def test_feeding_after_finish_is_a_clear_error(cfg):
    async def go() -> list:
        host = await loaded_host(cfg)
        job = _session(host)
        await job.feed(np.zeros(CHUNK, np.float32))
        job.finish()
        with pytest.raises(SessionFinished, match="no audio after finish"):
            await job.feed(np.zeros(CHUNK, np.float32))
        with pytest.raises(SessionFinished):
            job.finish()
        seen = [t async for t in job]
        with pytest.raises(SessionFinished):
            await job.feed(np.zeros(CHUNK, np.float32))
        await host.close()
        return seen

    assert asyncio.run(go()) == []  # silence: nothing heard, cleanly finished


def test_bad_and_too_long_audio_is_refused_where_it_enters(cfg):
    async def go() -> tuple[str, str]:
        host = await loaded_host(cfg)
        job = _session(host)
        with pytest.raises(BadRequest, match=r"float32 \[n\]") as bad:
            await job.feed(np.zeros(CHUNK, np.int16))
        await job.feed(np.zeros(CHUNK, np.float32))  # the session goes on
        longest = np.zeros(round(MAX_AUDIO_S * RATE), np.float32)
        with pytest.raises(BadValue, match=r"at most 300 s of audio") as long:
            await job.feed(longest)
        with pytest.raises(Cancelled):
            async for _ in job:
                pass
        await host.close()
        return str(bad.value), str(long.value)

    bad, long = asyncio.run(go())
    assert bad.startswith("audio: ") and "found 300.10 s" in long


def test_a_session_past_its_deadline_is_cancelled(cfg):
    async def go() -> float:
        host = await loaded_host(with_limits(cfg, request_timeout_s=0.3))
        job = _session(host)
        t0 = time.monotonic()
        with pytest.raises(Cancelled, match="deadline passed"):
            async for _ in job:
                pass
        took = time.monotonic() - t0
        await _ended(job)
        assert _requests(host, "timeout") == 1
        await host.close()
        return took

    assert asyncio.run(go()) < 0.6


def test_waiting_for_a_clients_audio_is_not_a_stall(cfg):
    async def go() -> tuple[bool, str]:
        host = await loaded_host(with_limits(cfg, stall_timeout_s=0.2))
        job = _session(host)
        await asyncio.sleep(0.5)  # the worker waits for audio all this time
        health = host.health()
        job.finish()
        assert [t async for t in job] == []
        await host.close()
        return health

    ok, why = asyncio.run(go())
    assert ok and why == "idle"  # the worker is free while the client is slow


def test_audio_waits_for_room_while_the_session_is_queued(cfg):
    async def go() -> int:
        host = await loaded_host(cfg)
        # One worker item as long as HOLD_S: a long text alone would not hold
        # the worker (it takes turns with the session, a word at a time).
        long = _say(host, f"[[stall:{HOLD_S}]] {words(LONG_WORDS)}")
        job = _session(host)  # queued behind it: nothing is taken
        for _ in range(INPUT_CHUNKS):
            await job.feed(np.zeros(CHUNK, np.float32))
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(job.feed(np.zeros(CHUNK, np.float32)), 0.3)
        host.cancel(long, "client disconnected")
        with pytest.raises(Cancelled):
            async for _ in long:
                pass
        await job.feed(np.zeros(CHUNK, np.float32))  # the worker took some
        job.finish()
        seen = [t async for t in job]
        await host.close()
        return len(seen)

    assert asyncio.run(go()) == 0


def test_voices_resolve_by_task(cfg):
    async def go() -> tuple[str, str, str, str, str]:
        host = await loaded_host(cfg)
        bare = host.open_session(TranscriptionRequest(sample_rate=RATE), "test")
        by_language = host.open_session(
            TranscriptionRequest(language="en", sample_rate=RATE), "test"
        )
        for job in (bare, by_language):
            job.finish()
            assert [t async for t in job] == []
        spoken = host.resolve(language="en").name
        with pytest.raises(BadRequest, match="a speech-recognition model") as asr:
            host.open_session(TranscriptionRequest("tone", sample_rate=RATE), "test")
        with pytest.raises(BadRequest, match="a text-to-speech voice") as tts:
            host.submit(SynthesisRequest("hello", VAD), "test")
        await host.close()
        return bare.voice.name, by_language.voice.name, spoken, asr.value, tts.value

    bare, by_language, spoken, asr, tts = asyncio.run(go())
    assert (bare, by_language, spoken) == (VAD, VAD, "tone")
    assert asr.code == tts.code == "voice_not_found"


def test_protocols_offer_only_speech_voices_for_speech(cfg):
    from aiohttp.test_utils import TestClient, TestServer

    from daemon.protocols.openai.app import make_app
    from daemon.protocols.wyoming.server import WyomingServer
    from daemon.service.edge.admission import Admission

    async def go() -> tuple[list[str], list[str], list[str]]:
        host = await loaded_host(cfg)
        info = WyomingServer(host, Admission(4)).info()
        wyoming = [v.name for program in info.tts for v in program.voices]
        async with TestClient(TestServer(make_app(host))) as client:
            listed = await (await client.get("/v1/audio/voices")).json()
        await host.close()
        return wyoming, [v["id"] for v in listed["voices"]], sorted(host.voices)

    wyoming, http, loaded = asyncio.run(go())
    assert loaded == ["tone", VAD] and wyoming == http == ["tone"]


def test_a_daemon_serves_speech_with_an_asr_model_beside_its_voices(
    test_voice, bins, onnx_dir, tmp_path
):
    from tests.daemon.conftest import serving

    vad = write_bundle(
        tmp_path / "vad", bins["matmul_tanh"].bin_path, onnx_dir / "matmul_tanh.onnx"
    )
    voices = [{"bundle": str(test_voice.bundle)}, {"bundle": str(vad)}]
    daemon = serving(tmp_path / "d", test_voice, voices=voices)
    d = next(daemon)
    with d.http_client() as c:
        health = c.get("/health").json()
        listed = c.get("/v1/audio/voices").json()
        speech = c.post(
            "/v1/audio/speech",
            json={"model": "tts-1", "input": "hello there", "voice": "tone"},
        )
        refused = c.post(
            "/v1/audio/speech",
            json={"model": "tts-1", "input": "hello there", "voice": VAD},
        )
    assert health["status"] == "ok" and health["voices"] == ["tone", VAD]
    assert [v["id"] for v in listed["voices"]] == ["tone"]
    assert speech.status_code == 200 and len(speech.content) > 0
    assert refused.status_code == 400 and "text-to-speech" in refused.text
    next(daemon, None)  # stopped cleanly, no traceback
