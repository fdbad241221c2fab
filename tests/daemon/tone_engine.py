"""A tiny real engine for the server tests: one tone per word, shaped by an NPU graph.

Each word runs the bundle's ``mm`` graph (y = tanh(x @ W), compiled for the HTP
simulator) ``calls_per_word`` times, feeding y back as x, and turns the result
into a tone; one chunk per word, so a request yields several chunks with graph
calls between them.  Audio is a pure function of the text.  The server never
imports this: the tests register it under ``hexvoice.engines`` through a
throw-away dist-info directory on the daemon's ``PYTHONPATH``.

Test hooks: a word ``[[stall:S]]`` sleeps S seconds without checking the cancel
token, as a hung graph call would (for the watchdog test).  ``params.max_loaded``
is the number of tone voices that fit in memory at once: loading one more raises
``MemoryError``, as a board's NPU memory would refuse a second voice set.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator, Mapping
from typing import Final

import numpy as np

from daemon.engine.bundles.manifest import Bundle
from daemon.engine.cancel import CancelToken
from daemon.engine.capabilities import MAX_SPEED, MIN_SPEED, Capabilities, VoiceInfo
from daemon.engine.graphs import Runner
from daemon.engine.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions
from tests.daemon.mm_engine import MmEngine

ENGINE_ID: Final = "test-tone"
WORD_SECONDS: Final = 0.12
BASE_HZ: Final = 180.0
SPAN_HZ: Final = 500.0
AMPLITUDE: Final = 0.3
#: Speakers of a tone voice unless ``params.speakers`` names others ([] for one).
SPEAKERS: Final = ("0", "1")
_STALL = re.compile(r"\[\[stall:([0-9.]+)\]\]")


class ToneEngine(MmEngine):
    engine_id = ENGINE_ID
    task = "tts"
    #: loaded, not yet closed, in this process (for ``params.max_loaded``)
    live: int = 0

    def __init__(self) -> None:
        super().__init__()
        self._rate = 0
        self._calls = 1

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        self._note("load")
        fit = bundle.params.get("max_loaded")
        if fit is not None and ToneEngine.live >= int(fit):
            raise MemoryError(f"test-tone: only {fit} voice(s) fit in memory")
        self._calls = int(bundle.params.get("calls_per_word", 1))
        self._mm = graphs["mm"]
        self._rate = bundle.sample_rate
        speakers = tuple(bundle.params.get("speakers", SPEAKERS))
        self._voice = VoiceInfo(
            bundle.name, tuple(bundle.languages), "test tones", speakers
        )
        ToneEngine.live += 1

    @property
    def sample_rate(self) -> int:
        return self._rate

    def voices(self) -> list[VoiceInfo]:
        assert self._voice is not None
        return [self._voice]

    def capabilities(self) -> Capabilities:
        """``params.speakers`` (default SPEAKERS); a word lasts WORD_SECONDS / speed."""
        assert self._voice is not None, "load() first"
        return Capabilities(
            task="tts",
            languages=self._voice.languages,
            sample_rate_out=self._rate,
            speakers=self._voice.speakers,
            speed_range=(MIN_SPEED, MAX_SPEED),
            streaming=True,
            max_input=MAX_TEXT_CHARS,
        )

    def warmup(self) -> None:
        self._note("warmup")
        list(self.synthesize("warm", SynthesisOptions()))

    def synthesize(
        self, text: str, options: SynthesisOptions, cancel: CancelToken | None = None
    ) -> Iterator[AudioChunk]:
        assert self._mm is not None, "load() first"
        self._note("synthesize")
        n = round(WORD_SECONDS / options.speed * self._rate)
        t = np.arange(n) / self._rate
        for i, word in enumerate(text.split()):
            stall = _STALL.fullmatch(word)
            if stall:
                time.sleep(float(stall.group(1)))
                continue
            seed = hashlib.sha256(word.encode("utf-8", "replace")).digest()
            x = (np.frombuffer(seed * 8, np.uint8)[:64] / 128.0 - 1.0).astype(
                np.float32
            )
            x = x.reshape(1, 64)
            for _ in range(self._calls):
                if cancel is not None:
                    cancel.check()
                x = self._mm.run({"x": x})[0].astype(np.float32)
            hz = BASE_HZ + SPAN_HZ * float(np.abs(x).mean())
            audio = (AMPLITUDE * np.sin(2 * np.pi * hz * t)).astype(np.float32)
            yield AudioChunk(audio, self._rate, segment=i, end_of_segment=True)

    def close(self) -> None:
        self._note("close")
        if self._mm is not None:
            ToneEngine.live -= 1
        self._mm = None
