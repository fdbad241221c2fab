"""The ``qwen3-tts`` engine: Qwen3-TTS 12 Hz speech on the NPU.

A bundle built by ``scripts/build-qwen3-tts`` holds the text projection, the
talker's prefill and decode buckets, the code predictor's step, the codec
windows and (Base) the speaker encoder (params.py), the CPU tables and the
tokenizer.  A request's text is cut into pieces the graphs hold
(text/pieces.py); each piece's prompt is built as upstream's ``generate``
(text/prompt.py), its frames come one per talker step (frames/generator.py)
and go to the codec stream, whose windows leave as audio while the talker
goes on (codec/stream.py); a request that is not streamed
(``SynthesisOptions.streamed``) has each piece's frames decoded once they are
all there, as upstream decodes them (``stream.whole``: exact when the
bundle's largest codec graph holds upstream's chunk and its context, as the
default codec_325 does; else exact up to that graph's frames, and the voices'
descriptions and the log say so).  A CustomVoice bundle's voices are its
speakers; a Base bundle is one voice that speaks in cloned
voices (``clone``, clone.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from typing import Final

import numpy as np

from daemon.engines.qwen3.tts.clone import Cloner
from daemon.engines.qwen3.tts.codec.stream import CodecStream, exact_frames, whole
from daemon.engines.qwen3.tts.graphio import graph_needs
from daemon.engines.qwen3.tts.model import Model, load_model
from daemon.engines.qwen3.tts.options import Request
from daemon.engines.qwen3.tts.params import ENGINE_ID, TtsParams
from daemon.engines.qwen3.tts.text.pieces import pieces
from daemon.sdk.audio.shaping import COMMA_PAUSE_S, SENTENCE_PAUSE_S
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import Capabilities, VoiceInfo
from daemon.sdk.cloning import CloningEngine
from daemon.sdk.graphs import Runner
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions, TtsEngineBase
from daemon.text.languages import code_of

_LOGGER = logging.getLogger(__name__)
ATTRIBUTION: Final = ("Qwen3-TTS", "https://github.com/QwenLM/Qwen3-TTS")
#: a piece that ends like this ends a sentence (the longer pause after it)
_SENTENCE_END: Final = re.compile(r"[.!?。！？…]['\"”’)）]*$")
#: warm-up: a short text, greedy, a few frames (every graph kind runs once)
WARMUP_TEXT: Final = "Hello."
WARMUP_FRAMES: Final = 4


class Qwen3TtsEngine(TtsEngineBase[TtsParams, Model], CloningEngine):
    """A Qwen3-TTS bundle, loaded; one request at a time (synchronous).  Its
    ``model`` is what parity tests and benchmarks drive part by part."""

    engine_id = ENGINE_ID
    params_type = TtsParams
    needs = staticmethod(graph_needs)
    no_cloner = "a CustomVoice bundle does not clone (use a Base one)"

    def __init__(self) -> None:
        super().__init__()
        #: a non-streamed utterance past the bundle's exact decode was logged
        self._said_inexact = False

    def build(
        self, bundle: Bundle, p: TtsParams, graphs: Mapping[str, Runner]
    ) -> Model:
        return load_model(bundle, p, graphs)

    @property
    def sample_rate(self) -> int:
        return self.model.p.codec.sample_rate

    # --- what clients see ---------------------------------------------------------
    @property
    def language_codes(self) -> tuple[str, ...]:
        """The advertised languages as codes ("zh", "en", ...; a name without one
        stays a name); "auto" left out."""
        names = self.model.p.advertised_languages[1:]
        return tuple(code_of(n) or n for n in names)

    @property
    def languages(self) -> tuple[str, ...]:
        """Every spelling a request may use: codes, upstream's names in lower and
        title case, and "auto" (the service matches these exactly)."""
        names = self.model.p.advertised_languages[1:]
        spellings = [*self.language_codes, *names, *(n.title() for n in names)]
        return tuple(dict.fromkeys([*spellings, "auto"]))

    def _exactness(self) -> str:
        """What the build measured of streamed audio against upstream's decode,
        and how far a request that is not streamed is upstream's decode."""
        c = self.model.p.codec
        said = ""
        if c.stream_snr_db is not None:
            snr = c.stream_snr_db
            said = f"; streamed audio {snr:.1f} dB SNR from upstream's decode"
        limit = exact_frames(c, self.model.codec.sizes)
        if limit is None:
            return f"{said}; not streamed: upstream's decode"
        seconds = limit * c.samples_per_frame / c.sample_rate
        return (f"{said}; not streamed: upstream's decode up to {seconds:.2f} s "
                f"({limit} frames), close to it past that")  # fmt: skip

    def voices(self) -> list[VoiceInfo]:
        p, name = self.model.p, self.bundle.name
        exact, codes = self._exactness(), self.language_codes
        if p.kind == "base":
            said = f"Qwen3-TTS Base ({name}); speaks in cloned voices{exact}"
            return [self.voice(said, ATTRIBUTION, languages=codes)]
        return [
            self.voice(
                f"Qwen3-TTS CustomVoice speaker {speaker!r} ({name}){exact}",
                ATTRIBUTION,
                name=speaker,
                languages=codes,
            )
            for speaker in p.speakers
        ]

    def capabilities(self) -> Capabilities:
        m = self.model
        return Capabilities(
            task="tts",
            languages=self.languages,
            sample_rate_out=self.sample_rate,
            speakers=tuple(m.p.speakers),
            speed_range=None,  # upstream has no speed control
            streaming=True,
            max_input=MAX_TEXT_CHARS,
            cloning=None if m.cloner is None else m.cloner.capability,
        )

    # --- work -----------------------------------------------------------------------
    def speak(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None
    ) -> Iterator[AudioChunk]:
        """Audio per codec window, a segment per piece of text; ValueError for
        options this engine refuses or text with nothing to say."""
        m = self.model
        request = Request.from_options(options, m.p)
        parts = pieces(text, lambda piece: m.fits(piece, request))
        if not parts:
            raise ValueError(f"{ENGINE_ID}: no text to speak")
        return self._stream(parts, request, options.streamed, cancel)

    def _stream(
        self,
        parts: list[str],
        request: Request,
        streamed: bool,
        cancel: CancelToken | None,
    ) -> Iterator[AudioChunk]:
        rate = self.sample_rate
        for index, piece in enumerate(parts):
            last = index == len(parts) - 1
            pause = 0.0 if last else self._pause(piece)
            # upstream's samples as decoded: no fades (upstream has none), the
            # pause between pieces is hexvoice's own cut
            audio = self._audio if streamed else self._whole
            for samples in audio(piece, request, cancel):
                if samples.size:
                    yield AudioChunk(samples, rate, segment=index)
            # the talker's caches and the codec's graphs hold nothing of the
            # piece now: other requests may run here
            tail = np.zeros(round(pause * rate), np.float32)
            yield AudioChunk(tail, rate, index, end_of_segment=True)

    def _audio(
        self, piece: str, request: Request, cancel: CancelToken | None
    ) -> Iterator[np.ndarray]:
        m = self.model
        prompt = m.prompt(piece, request, cancel)
        stream = CodecStream(m.p, m.codec, "streaming", cancel)
        for frame in m.generator.frames(prompt, request, cancel):
            yield from stream.push(frame)
        yield from stream.finish()

    def _whole(
        self, piece: str, request: Request, cancel: CancelToken | None
    ) -> Iterator[np.ndarray]:
        """Every frame of the piece first, then upstream's decode of them."""
        m = self.model
        prompt = m.prompt(piece, request, cancel)
        frames = list(m.generator.frames(prompt, request, cancel))
        if not frames:
            return
        self._check_exact(len(frames))
        stream = CodecStream(m.p, m.codec, whole(m.p.codec, m.codec.sizes), cancel)
        yield from stream.push(np.stack(frames))
        yield from stream.finish()

    def _check_exact(self, frames: int) -> None:
        """Log once that the bundle decodes an utterance this long only close
        to upstream's decode."""
        m = self.model
        limit = exact_frames(m.p.codec, m.codec.sizes)
        if limit is None or frames <= limit or self._said_inexact:
            return
        self._said_inexact = True
        _LOGGER.warning(
            "%s: a %d-frame utterance not streamed is longer than the %d frames "
            "its largest codec graph (codec_%d) decodes as upstream does; past "
            "them it is close to upstream's decode, not equal (a bundle with "
            "codec_%d, upstream's chunk and context, decodes any length: "
            "scripts/build-qwen3-tts's default windows)",
            self.bundle.name, frames, limit,
            max(m.codec.sizes), m.p.codec.chunk_frames + m.p.codec.left_context,
        )  # fmt: skip

    @staticmethod
    def _pause(piece: str) -> float:
        return SENTENCE_PAUSE_S if _SENTENCE_END.search(piece) else COMMA_PAUSE_S

    def cloner(self) -> Cloner | None:
        """A Base bundle's x-vectors (clone.py); ``language`` is not used (an
        x-vector has none: the request's language row picks it per request);
        aux clips are not taken (``Cloning.max_aux`` is 0)."""
        return self.model.cloner

    def warmup(self) -> None:
        """Every graph once: the talker's buckets, a few greedy frames through
        the predictor and the codec windows, the speaker encoder."""
        self.model.warmup(WARMUP_TEXT, WARMUP_FRAMES)
