"""A transcription session's answer as Wyoming events, sent as it is heard.

A ``transcript-chunk`` per growth of the text (the finals so far plus the open
partial: chunks only append, and join up to the transcript), then, once the
session ends, the ``transcript`` (the whole text, with its language) and
``transcript-stop``; or one ``error`` instead of the rest.  Nothing more of a
``Cycle`` is sent once it is answered: its last word went out, or the listener
refused it meanwhile (listen.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from wyoming.asr import Transcript, TranscriptChunk, TranscriptStop
from wyoming.error import Error
from wyoming.event import Event, Eventable

from daemon.protocols.wyoming.requests import ASR_WIRE, AudioFormat, error_event
from daemon.sdk.cancel import Cancelled
from daemon.service.edge.refusals import RequestError
from daemon.service.scheduling.jobs import AsrJob, outcome
from daemon.text.languages import transcript_language

Write = Callable[[Event], Awaitable[None]]
#: The host's ``cancel``: a session whose client left stops within a graph call.
Cancel = Callable[[AsrJob, str], None]


@dataclass(eq=False)
class Cycle:
    """One audio-start ... audio-stop cycle."""

    format: AudioFormat | None
    job: AsrJob | None = None
    relay: asyncio.Task[None] | None = None
    #: its last word (transcript-stop or an error) was sent, or the client left:
    #: nothing more is sent, its chunks are dropped until audio-stop
    answered: bool = False


async def relay(
    cycle: Cycle, language: str | None, write: Write, cancel: Cancel
) -> None:
    """Send what ``cycle``'s session hears, to its end (a task of its own)."""
    job = cycle.job
    assert job is not None
    try:
        await _send(cycle, job, language, write)
    except ConnectionError:  # the client left: its session stops
        cancel(job, "client disconnected")
    finally:
        cycle.answered = True


async def _send(cycle: Cycle, job: AsrJob, language: str | None, write: Write) -> None:
    done = shown = ""  # the finals' text; what the client was sent
    heard: list[str | None] = []  # the language each transcript names
    try:
        async for t in job:
            heard.append(t.language)
            text = done + t.text
            done = text if t.final else done
            if len(text) > len(shown) and text.startswith(shown):
                if not await _emit(write, cycle, TranscriptChunk(text[len(shown) :])):
                    return  # refused meanwhile: its error was the last word
                shown = text
    except RequestError as exc:
        await _emit(write, cycle, error_event(exc, ASR_WIRE), last=True)
        return
    except Cancelled as exc:
        error = Error(text=str(exc), code=outcome(exc))
        await _emit(write, cycle, error, last=True)
        return
    if len(done) > len(shown) and done.startswith(shown):
        await _emit(write, cycle, TranscriptChunk(done[len(shown) :]))
    named = transcript_language(language, heard)
    await _emit(write, cycle, Transcript(text=done, language=named))
    await _emit(write, cycle, TranscriptStop(), last=True)


async def _emit(
    write: Write, cycle: Cycle, event: Event | Eventable, last: bool = False
) -> bool:
    """Send ``event`` of ``cycle`` unless the cycle was answered already.
    The check and the write's buffering happen in one step of the loop,
    so nothing of a cycle can follow its error."""
    if cycle.answered:
        return False
    cycle.answered = last
    await write(event if isinstance(event, Event) else event.event())
    return True
