"""Transcription responses of the HTTP API (OpenAI ``response_format``, SSE).

A transcription is the session's final transcripts, one per segment, with the
audio's duration.  Its ``text`` is the segments' texts joined as upstream joins
its chunks (``stream_text``).  ``json`` is OpenAI's Transcription
(``{"text", "usage"}``), ``verbose_json`` its TranscriptionVerbose (language,
duration, segments with id/start/end/text; the fields Whisper fills from its
decoder's statistics, which these engines do not compute, are zeros; the
language is upstream's name, "English", with ``language_code`` "en" beside it:
daemon/text/languages.py has the rule), ``text``
the bare text, ``srt``/``vtt`` one cue per segment.  ``stream=true`` sends
``transcript.text.delta`` events as the text grows and one
``transcript.text.done`` with the whole text (docs/clients.md, transcriptions).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from daemon.sdk.asr import Transcript, stream_text
from daemon.text.languages import reported

#: OpenAI's ``response_format`` values we answer (not ``diarized_json``).
RESPONSE_FORMATS: Final = ("json", "text", "verbose_json", "srt", "vtt")
DEFAULT_RESPONSE_FORMAT: Final = "json"  # OpenAI's default
_TEXT: Final = "text/plain; charset=utf-8"
_CONTENT_TYPES: Final = {
    "json": "application/json",
    "verbose_json": "application/json",
    "text": _TEXT,
    "srt": _TEXT,
    "vtt": "text/vtt; charset=utf-8",
}
_MS_PER_S: Final = 1000


@dataclass(frozen=True)
class Transcription:
    """A finished transcription: its segments (final transcripts) and audio."""

    segments: tuple[Transcript, ...]
    duration_s: float
    #: the request's language hint: reported when no segment detected one
    language: str | None = None

    @property
    def text(self) -> str:
        return stream_text(self.segments)

    @property
    def languages(self) -> tuple[str, str]:
        """(names, codes) of the language, as daemon/text/languages.py words
        them: the segments' merged, else the request's hint ("" for none)."""
        heard = reported(t.language for t in self.segments)
        return heard if heard[0] else reported([self.language])

    def render(self, fmt: str) -> str:
        """The transcription in ``fmt`` (one of ``RESPONSE_FORMATS``)."""
        if fmt == "json":
            return json.dumps({"text": self.text, "usage": self._usage()})
        if fmt == "verbose_json":
            return json.dumps(self._verbose())
        if fmt == "text":
            return self.text + "\n"
        return self._cues(fmt)

    def response(self, fmt: str) -> web.Response:
        body = self.render(fmt).encode()
        return web.Response(body=body, headers={"Content-Type": _CONTENT_TYPES[fmt]})

    def _usage(self) -> dict[str, Any]:
        return {"type": "duration", "seconds": round(self.duration_s, 3)}

    def _verbose(self) -> dict[str, Any]:
        names, codes = self.languages
        segments = [
            {
                "id": i,
                "seek": 0,
                "start": t.start_s,
                "end": t.end_s,
                "text": t.text,
                "tokens": [],
                "temperature": 0.0,
                "avg_logprob": 0.0,
                "compression_ratio": 0.0,
                "no_speech_prob": 0.0,
            }
            for i, t in enumerate(self.segments)
        ]
        return {
            "task": "transcribe",
            "language": names,
            "language_code": codes,
            "duration": round(self.duration_s, 3),
            "text": self.text,
            "segments": segments,
            "usage": self._usage(),
        }

    def _cues(self, fmt: str) -> str:
        """SubRip (numbered, ``00:00:01,500``) or WebVTT (``00:00:01.500``)."""
        sep = "," if fmt == "srt" else "."
        cues = []
        for i, t in enumerate(self.segments, 1):
            times = f"{_clock(t.start_s, sep)} --> {_clock(t.end_s, sep)}"
            number = f"{i}\n" if fmt == "srt" else ""
            cues.append(f"{number}{times}\n{t.text.strip()}\n")
        head = [] if fmt == "srt" else ["WEBVTT\n"]
        return "\n".join(head + cues)


def _clock(seconds: float, sep: str) -> str:
    ms = round(seconds * _MS_PER_S)
    s, ms = divmod(ms, _MS_PER_S)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


class Deltas:
    """The ``transcript.text.delta`` pieces of a session's transcripts.

    A partial carries its segment's text so far and only grows; each piece is
    what it adds to what was sent.  A final whose text does not extend what its
    partials sent (sent text cannot be taken back) adds nothing; the done event
    carries the whole text either way.
    """

    def __init__(self) -> None:
        self._sent = ""  # of the open segment

    def push(self, transcript: Transcript) -> str:
        text, sent = transcript.text, self._sent
        delta = text[len(sent) :] if text.startswith(sent) else ""
        self._sent = "" if transcript.final else sent + delta
        return delta


def sse_event(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


def sse_delta(delta: str) -> bytes:
    return sse_event({"type": "transcript.text.delta", "delta": delta})


def sse_done(text: str) -> bytes:
    return sse_event({"type": "transcript.text.done", "text": text})
