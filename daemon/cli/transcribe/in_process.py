"""``hexvoice transcribe FILE --bundle DIR``: an ASR engine in this process.

No service involved: the bundle's graphs open on ``--backend``, the file is
checked as the service checks it (audio_files.py, then the one request check
against the engine's capabilities), fed to one session block by block, and the
finals are rendered as the HTTP API renders them.
"""

from __future__ import annotations

import argparse

from daemon.cli.errors import CommandError
from daemon.protocols import audio_files
from daemon.protocols.openai.transcripts import Transcription
from daemon.sdk.asr import AsrEngine, Transcript
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cancel import Cancelled
from daemon.sdk.local import open_engine
from daemon.service.config import DEFAULT_MAX_AUDIO_S
from daemon.service.edge.refusals import BadRequest
from daemon.service.edge.requests import TranscriptionRequest, check


def transcribe(data: bytes, args: argparse.Namespace) -> str:
    """``data`` (an audio file's bytes) transcribed by ``args.bundle``'s engine,
    rendered in ``args.format``; ``CommandError`` says why not."""
    try:
        with open_engine(args.bundle, args.backend, verify=True) as (engine, _):
            if not isinstance(engine, AsrEngine):
                raise CommandError(
                    f"{args.bundle}: engine {engine.engine_id!r} does not "
                    "recognise speech (a text-to-speech voice?)"
                )
            finals, seconds = _run(engine, data, args)
    except BadRequest as exc:
        field = audio_files.FIELDS.get(exc.field or "", exc.field)
        raise CommandError(exc.at(field)) from None
    except (BundleError, LookupError, ValueError, Cancelled) as exc:
        raise CommandError(str(exc)) from None
    return Transcription(tuple(finals), seconds, args.language).render(args.format)


def _run(
    engine: AsrEngine, data: bytes, args: argparse.Namespace
) -> tuple[list[Transcript], float]:
    caps = engine.capabilities()
    cap = min(DEFAULT_MAX_AUDIO_S, caps.max_input)  # as the service, by default
    audio = audio_files.read_header(data, cap)
    extra = (
        {} if args.max_new_tokens is None else {"max_new_tokens": args.max_new_tokens}
    )
    request = TranscriptionRequest(
        None, args.language, audio.sample_rate, audio.channels, args.prompt, extra
    )
    check(request, caps)  # the one check, as the service makes it
    audio = audio_files.scan(audio, cap)
    session = engine.open(request.options(None))
    finals: list[Transcript] = []
    try:
        for block in audio_files.blocks(audio):
            finals += [t for t in session.feed(block, audio.sample_rate) if t.final]
        finals += [t for t in session.finish() if t.final]
    finally:
        session.close()
    return finals, audio.seconds
