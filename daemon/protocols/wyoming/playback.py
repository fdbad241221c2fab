"""One Wyoming audio cycle from a running job: ``audio-start``, ``audio-chunk``
events of ``SAMPLES_PER_CHUNK`` samples (only the last one shorter), each
stamped with its start, and ``audio-stop``; or an ``error`` event if the job
fails.  A cycle after the first of a stream starts with the pause the engine
would have put between the two sentences.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event

from daemon.protocols.wyoming.requests import error_event
from daemon.sdk.audio.shaping import Frames, to_int16
from daemon.sdk.cancel import Cancelled
from daemon.service.edge.metrics import Metrics
from daemon.service.edge.refusals import RequestError
from daemon.service.scheduling.jobs import Job, outcome

SAMPLE_WIDTH: Final = 2  # s16le
CHANNELS: Final = 1
#: Audio per ``audio-chunk`` event (wyoming-piper also sends 1024 samples).
SAMPLES_PER_CHUNK: Final = 1024
_MS: Final = 1000

Write = Callable[[Event], Awaitable[None]]


async def play(
    job: Job, write: Write, metrics: Metrics, received: float, pause_s: float
) -> bool:
    """Send ``job``'s audio as one cycle; False if the job failed (its error
    was sent).  What a write raises (the client left) propagates."""
    rate = job.voice.sample_rate
    frames = Frames(SAMPLES_PER_CHUNK * SAMPLE_WIDTH)
    started, sent = False, 0  # samples
    try:
        async for chunk in job:
            pcm = to_int16(chunk.audio)
            if not started and len(pcm):
                started = True
                metrics.first_audio("wyoming", time.monotonic() - received)
                await write(AudioStart(rate, SAMPLE_WIDTH, CHANNELS).event())
                pcm = bytes(round(pause_s * rate) * SAMPLE_WIDTH) + pcm
            for frame in frames.push(pcm):
                sent = await _audio(write, frame, rate, sent)
    except RequestError as exc:
        await write(error_event(exc))
        return False
    except Cancelled as exc:
        await write(Error(text=str(exc), code=outcome(exc)).event())
        return False
    if not started:  # the engine had nothing to say: still one (empty) cycle
        await write(AudioStart(rate, SAMPLE_WIDTH, CHANNELS).event())
    last = frames.flush()
    if last:
        sent = await _audio(write, last, rate, sent)
    await write(AudioStop(timestamp=sent * _MS // rate).event())
    return True


async def _audio(write: Write, pcm: bytes, rate: int, sent: int) -> int:
    """One ``audio-chunk`` stamped with its start (ms); samples sent after it."""
    await write(
        AudioChunk(rate, SAMPLE_WIDTH, CHANNELS, pcm, sent * _MS // rate).event()
    )
    return sent + len(pcm) // SAMPLE_WIDTH
