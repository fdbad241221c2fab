"""Jobs take turns on the NPU worker a segment at a time, through ``hexvoice
serve`` on Unix sockets with real clients (httpx over HTTP, the ``wyoming``
library): a sentence behind two long requests speaks within a bound and before
they end; every response's bytes are those of the request alone; an interleaved
job's cancel, deadline and the queue's Busy answer behave as for one alone; a
reload that replaces the engine under a job in flight lets it finish first.

The tone test voice makes one segment per word (tests/daemon/tone_engine.py),
slowed here to ``CALLS_PER_WORD`` graph calls a word so that a long request
lasts seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice, words
from tests.daemon.service.reloads import set_params, sighup
from tests.daemon.voice_clients import serving

#: Graph calls per word (~0.2 ms each on the simulator): ~10 ms a word, so a
#: long request takes seconds while one round of three jobs takes ~30 ms.
CALLS_PER_WORD = 40
LONG_WORDS = 150
SENTENCE = "one short sentence"
#: The bound on waits (a sentence's first audio, a cancelled job's place in
#: the queue) as a part of one long request alone (~1.5 s; more on a busy
#: machine, and so is the bound): a round of the jobs ahead, a word each, is
#: ~30 ms; first come, first served the sentence waits more than one of them.
BOUND_PART = 4
#: A reload of the tone voice (a load and a warm-up) takes ~0.15 s: a request
#: with longer than this left when it began is in flight when its engine goes.
RELOAD_S = 0.5
#: Three admitted (queue_size + 1), the fourth is refused.
QUEUE_SIZE = 2
#: How long a test waits for the daemon to show a state (s).
WAIT_S = 10.0
#: The deadline of the deadline daemon (s): shorter than a long request alone.
DEADLINE_S = 1.0
SPEECH = "/v1/audio/speech"


@dataclass
class Heard:
    """One response: its audio bytes, and when it was sent, first heard, ended."""

    data: bytes = b""
    sent: float = 0.0
    first: float | None = None
    end: float | None = None
    status: int = 0
    error: str = ""

    @property
    def wait_s(self) -> float:
        assert self.first is not None, "no audio"
        return self.first - self.sent


@pytest.fixture(scope="module")
def voice(tmp_path_factory, test_voice: ServiceVoice) -> ServiceVoice:
    root = tmp_path_factory.mktemp("rounds_voice")
    return copy_voice(test_voice, root / "slow", calls_per_word=CALLS_PER_WORD)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, voice: ServiceVoice) -> Iterator[Daemon]:
    limits = {"queue_size": QUEUE_SIZE, "max_input_chars": 50_000}
    with serving(tmp_path_factory.mktemp("rounds"), voice, limits=limits) as d:
        yield d


async def http_speech(
    d: Daemon, text: str, heard: Heard, leave: asyncio.Event | None = None
) -> None:
    """``text`` as streamed pcm into ``heard``; the client leaves at ``leave``
    (once it heard some)."""
    body = {"model": "tts-1", "voice": "tone", "input": text, "response_format": "pcm"}
    transport = httpx.AsyncHTTPTransport(uds=str(d.http))
    async with httpx.AsyncClient(transport=transport, timeout=60) as c:
        heard.sent = time.monotonic()
        async with c.stream("POST", f"http://x{SPEECH}", json=body) as r:
            heard.status = r.status_code
            async for data in r.aiter_bytes():
                heard.first = heard.first or time.monotonic()
                heard.data += data
                if leave is not None and leave.is_set():
                    return
    heard.end = time.monotonic()


async def wyoming_speech(d: Daemon, text: str, heard: Heard) -> None:
    c = AsyncClient.from_uri(d.uri)
    await c.connect()
    heard.sent = time.monotonic()
    await c.write_event(Synthesize(text).event())
    while (e := await c.read_event()) is not None:
        if e.type == "audio-chunk":
            heard.first = heard.first or time.monotonic()
            heard.data += e.payload or b""
        elif e.type == "error":
            heard.error = str(e.data.get("text"))
            break
        elif e.type == "audio-stop":
            heard.end = time.monotonic()
            break
    await c.disconnect()


def alone_http(d: Daemon, text: str) -> Heard:
    heard = Heard()
    asyncio.run(http_speech(d, text, heard))
    assert heard.status == 200 and heard.end is not None
    return heard


def alone_s(heard: Heard) -> float:
    assert heard.end is not None
    return heard.end - heard.sent


async def until(d: Daemon, metric: str, value: float, most: bool = False) -> None:
    """Wait until the daemon's ``metric`` reads ``value`` (``most``: at most)."""
    end = time.monotonic() + WAIT_S
    while True:
        now = await asyncio.to_thread(lambda: d.metrics()[metric])
        if now == value or (most and now < value):
            return
        assert time.monotonic() < end, f"{metric} never reached {value}"
        await asyncio.sleep(0.01)


@pytest.fixture(scope="module")
def alone(daemon: Daemon) -> dict[str, Heard]:
    """What each long text sounds like alone (HTTP pcm)."""
    return {t: alone_http(daemon, t) for t in (LONG_A, LONG_B)}


LONG_A, LONG_B = words(LONG_WORDS, "a"), words(LONG_WORDS, "b")


def test_a_sentence_behind_two_long_requests_speaks_within_a_bound(daemon, alone):
    long_a, long_b = LONG_A, LONG_B
    sentence_alone = Heard()
    asyncio.run(wyoming_speech(daemon, SENTENCE, sentence_alone))
    bound = alone_s(alone[long_a]) / BOUND_PART

    async def together() -> tuple[Heard, Heard, Heard]:
        a, b, s = Heard(), Heard(), Heard()
        ta = asyncio.create_task(http_speech(daemon, long_a, a))
        await until(daemon, "hexvoice_queue_depth", 1)
        tb = asyncio.create_task(http_speech(daemon, long_b, b))
        await until(daemon, "hexvoice_queue_depth", 2)  # both ahead of it
        await wyoming_speech(daemon, SENTENCE, s)
        await asyncio.gather(ta, tb)
        return a, b, s

    a, b, s = asyncio.run(together())
    assert s.error == "" and s.end is not None
    assert s.wait_s < bound, f"first audio after {s.wait_s:.2f} s (> {bound:.2f})"
    assert s.end < min(a.end, b.end)  # type: ignore[type-var]
    assert a.data == alone[long_a].data and b.data == alone[long_b].data
    assert s.data == sentence_alone.data


def test_an_interleaved_job_cancels_at_once_and_busy_still_holds(daemon, alone):
    texts = [LONG_A, words(LONG_WORDS, "c"), LONG_B]
    before = daemon.metrics()

    async def go() -> tuple[list[Heard], httpx.Response, float]:
        heard, leave, tasks = [Heard() for _ in texts], asyncio.Event(), []
        for i, text in enumerate(texts):  # the middle one's client will leave
            task = http_speech(daemon, text, heard[i], leave if i == 1 else None)
            tasks.append(asyncio.create_task(task))
            await until(daemon, "hexvoice_queue_depth", i + 1)  # in this order
        with daemon.http_client() as c:  # a fourth: no room, as before
            busy = await asyncio.to_thread(
                c.post, SPEECH, json={"model": "tts-1", "input": "x", "voice": "tone"}
            )
        leave.set()
        t0 = time.monotonic()
        await tasks[1]
        await until(daemon, "hexvoice_queue_depth", QUEUE_SIZE, most=True)
        freed = time.monotonic() - t0
        await asyncio.gather(*tasks)
        return heard, busy, freed

    heard, busy, freed = asyncio.run(go())
    assert busy.status_code == 429 and int(busy.headers["Retry-After"]) >= 1
    assert heard[1].first is not None and heard[1].end is None  # left mid-way
    m = daemon.metrics()
    key = 'hexvoice_requests_total{outcome="cancelled",protocol="http"}'
    assert m[key] == before.get(key, 0) + 1
    assert m["hexvoice_last_cancel_graph_calls"] <= 1
    assert freed < alone_s(alone[LONG_A]) / BOUND_PART  # its place came back
    assert heard[0].data == alone[texts[0]].data
    assert heard[2].data == alone[texts[2]].data


def test_an_interleaved_job_past_its_deadline_times_out(tmp_path, voice):
    limits = {"request_timeout_s": DEADLINE_S, "max_input_chars": 50_000}
    with serving(tmp_path, voice, limits=limits) as d:
        sentence_alone = alone_http(d, SENTENCE)

        async def go() -> tuple[Heard, Heard]:
            long, short = Heard(), Heard()
            task = asyncio.create_task(wyoming_speech(d, words(LONG_WORDS), long))
            await until(d, "hexvoice_queue_depth", 1)
            await http_speech(d, SENTENCE, short)
            await task
            return long, short

        long, short = asyncio.run(go())
        assert "deadline passed" in long.error
        assert long.end is None and long.first is not None  # cut mid-way
        assert short.data == sentence_alone.data  # its neighbour is untouched
        m = d.metrics()
        assert m['hexvoice_requests_total{outcome="timeout",protocol="wyoming"}'] == 1


def test_a_reload_lets_the_jobs_in_flight_on_its_engine_finish(tmp_path, voice, alone):
    mine = copy_voice(voice, tmp_path / "voice")  # speaks as the module's daemon
    with serving(tmp_path / "d", mine) as d:

        async def go() -> tuple[Heard, float]:
            heard = Heard()
            task = asyncio.create_task(http_speech(d, LONG_A, heard))
            await until(d, "hexvoice_queue_depth", 1)
            # A new version of the voice: the reload replaces its engine while
            # the request is between two of its words.
            set_params(mine.bundle, calls_per_word=CALLS_PER_WORD + 1)
            mark = len(d.notify.messages)
            await asyncio.to_thread(sighup, d)
            began = next(t for t, m in d.notify.messages[mark:] if "RELOADING=1" in m)
            await task
            return heard, began

        heard, began = asyncio.run(go())
        assert d.metrics()['hexvoice_reloads_total{outcome="ok"}'] == 1
        assert heard.status == 200 and heard.end is not None
        assert heard.end - began > RELOAD_S  # the engine changed mid-request ...
        assert heard.data == alone[LONG_A].data  # ... which ended on its own
