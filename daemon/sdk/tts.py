"""The ``TtsEngine`` protocol every text-to-speech engine implements, and its
small value types (per-request options, audio chunks).

The host iterates ``synthesize`` on its single NPU worker thread and streams
each chunk to the client as soon as it is yielded.  Between the chunk that ends
a segment (``end_of_segment``) and the next one it may run other requests on
the worker, other ``synthesize`` calls of the same engine included, so an
engine marks a segment's end only where the generator holds nothing of its
request in the engine's shared state (bound graph buffers, KV caches, a
streaming decoder's context): what it keeps from there on is its own (text
left, its random generator).  Within a segment the host asks for the next
chunk before running anything else.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

import numpy as np

from daemon.sdk.base import EngineBase, M, P
from daemon.sdk.cancel import CancelToken
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.registry import Engine

#: The longest text (characters) the TTS engines declare they accept: no limit.
#: None of them limits text length (each splits long text into sentences and
#: pieces that fit its graphs, re-splitting what does not fit), so what bounds a
#: request is the service's ``limits.max_input_chars`` (default: OpenAI's
#: 4096).  An engine with a real bound declares its own ``max_input``.
MAX_TEXT_CHARS: Final = math.inf


@dataclass(frozen=True)
class SynthesisOptions:
    """Per-request options; engine-specific knobs travel in ``extra``.

    Plain values: speaker, speed and seed were checked against the engine's
    ``capabilities()`` before the request was queued (``requests.check``, the
    one check); engines do not check them again.
    """

    voice: str | None = None
    #: speaker of a multi-speaker voice
    speaker: str | None = None
    seed: int | None = None
    speed: float = 1.0
    #: the request's language (``en``, ``zh``, ``english``; checked against the
    #: voice's languages); None: the engine's own choice (e.g. detect it)
    language: str | None = None
    #: a cloned voice: what its engine computed from the clip (cloning.py);
    #: ``voice`` is then the engine's own voice it speaks through
    voice_print: VoicePrint | None = None
    #: the client hears the audio as it is yielded; False: it takes the audio
    #: whole once synthesis is over (HTTP ``"stream": false`` and the formats
    #: encoded after synthesis, Wyoming ``synthesize``), so an engine may
    #: trade first-audio latency for exactness (Qwen3-TTS decodes the whole
    #: utterance as upstream does)
    streamed: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AudioChunk:
    """Mono float32 audio in [-1, 1] at ``sample_rate``."""

    audio: np.ndarray
    sample_rate: int
    segment: int = 0
    #: the segment's last chunk: the host may interleave other requests here
    #: (see the module docstring); ``shaped_segment`` sets it once the
    #: segment's vocoder output has run out
    end_of_segment: bool = False

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate


@runtime_checkable
class TtsEngine(Engine, Protocol):
    """A text-to-speech engine (GPT-SoVITS, Piper, ...)."""

    task: Literal["tts"]

    @property
    def sample_rate(self) -> int: ...

    def synthesize(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None = None
    ) -> Iterator[AudioChunk]:
        """Yield audio as soon as each piece is ready; raise ``Cancelled``."""


class TtsEngineBase(EngineBase[P, M]):
    """The shell of a TTS engine (base.py): its task, the bundle's rate, and
    ``synthesize`` with unset options as ``SynthesisOptions()``."""

    task = "tts"

    @property
    def sample_rate(self) -> int:
        return self.bundle.sample_rate

    def synthesize(
        self,
        text: str,
        options: SynthesisOptions | None = None,
        cancel: CancelToken | None = None,
    ) -> Iterator[AudioChunk]:
        return self.speak(text, options or SynthesisOptions(), cancel)

    @abstractmethod
    def speak(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        """``synthesize``: everything checked first (ValueError before any graph
        call), then the chunks as soon as each is ready."""
