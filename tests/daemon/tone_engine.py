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

Cloning (``params.cloning: {min_seconds, max_seconds, transcript?, model?}``):
``clone`` measures the clip's pitch (the strongest FFT bin between 50 and
2000 Hz), runs the ``mm`` graph once per ``CLONE_BLOCK_S`` of clip (cancel
checked between calls, so a registration is NPU work like a synthesis), and
returns a print of that pitch.  A voice with a print speaks every word at the
print's pitch instead of the word's, so a test hears which voice spoke.  The
print's model is the ``mm`` graph's sha256 unless ``cloning.model`` says
otherwise (a "rebuilt" bundle); ``cloning.calls_per_block`` (default 1) makes
registration slower, for the queue and cancellation tests.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator, Mapping
from typing import Final

import numpy as np

from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cancel import CancelToken
from daemon.sdk.capabilities import MAX_SPEED, MIN_SPEED, Capabilities, VoiceInfo
from daemon.sdk.cloning import AuxClips, Cloning, VoicePrint
from daemon.sdk.graphs import Runner
from daemon.sdk.license import License
from daemon.sdk.tts import MAX_TEXT_CHARS, AudioChunk, SynthesisOptions
from tests.daemon.mm_engine import MmEngine

ENGINE_ID: Final = "test-tone"
WORD_SECONDS: Final = 0.12
BASE_HZ: Final = 180.0
SPAN_HZ: Final = 500.0
AMPLITUDE: Final = 0.3
#: Speakers of a tone voice unless ``params.speakers`` names others ([] for one).
SPEAKERS: Final = ("0", "1")
_STALL = re.compile(r"\[\[stall:([0-9.]+)\]\]")
#: One ``mm`` call per this much clip during ``clone``.
CLONE_BLOCK_S: Final = 0.25
#: Where ``clone`` looks for the clip's pitch (Hz).
PITCH_BAND: Final = (50.0, 2000.0)


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
        self._cloning: Cloning | None = None
        self._clone_calls = 1
        spec = bundle.params.get("cloning")
        if spec is not None:
            model = spec.get("model") or bundle.graphs["mm"].sha256
            self._cloning = Cloning(
                model,
                float(spec["min_seconds"]),
                float(spec["max_seconds"]),
                spec.get("transcript", "unused"),
                int(spec.get("max_aux", 0)),
                spec.get("consent", "optional"),
            )
            self._clone_calls = int(spec.get("calls_per_block", 1))
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
            cloning=self._cloning,
        )

    def clone(
        self,
        audio: np.ndarray,
        sample_rate: int,
        transcript: str | None,
        cancel: CancelToken | None = None,
        *,
        language: str | None = None,
        aux: AuxClips = (),
    ) -> VoicePrint:
        """A print of the clip's pitch (see the module doc); the language and
        the number of aux clips are kept in its meta."""
        assert self._mm is not None and self._cloning is not None, "a cloning voice"
        self._note("clone")
        self._cloning.check(ENGINE_ID, transcript, aux)
        spectrum = np.abs(np.fft.rfft(audio))
        hz = np.fft.rfftfreq(len(audio), 1.0 / sample_rate)
        band = (hz >= PITCH_BAND[0]) & (hz <= PITCH_BAND[1])
        if not band.any() or spectrum[band].max() == 0:
            raise ValueError("audio: expected a clip with a pitch, found none")
        pitch = float(hz[band][np.argmax(spectrum[band])])
        x = np.full((1, 64), pitch / PITCH_BAND[1], np.float32)
        blocks = max(1, round(len(audio) / sample_rate / CLONE_BLOCK_S))
        for _ in range(blocks * self._clone_calls):
            if cancel is not None:
                cancel.check()
            x = self._mm.run({"x": x})[0].astype(np.float32)
        arrays = {"pitch": np.array([pitch], np.float32), "mm": x[0]}
        meta = {
            "seconds": len(audio) / sample_rate,
            "transcript": transcript or "",
            "language": language or "",
            "aux": len(aux),
        }
        return VoicePrint(ENGINE_ID, self._cloning.model, arrays, meta)

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
            if options.voice_print is not None:  # a cloned voice: its pitch
                hz = float(options.voice_print.arrays["pitch"][0])
            audio = (AMPLITUDE * np.sin(2 * np.pi * hz * t)).astype(np.float32)
            yield AudioChunk(audio, self._rate, segment=i, end_of_segment=True)

    def close(self) -> None:
        self._note("close")
        if self._mm is not None:
            ToneEngine.live -= 1
        self._mm = None


#: A tone engine under terms its user must accept (as IndexTTS-2's licence asks).
LICENSED_ENGINE_ID: Final = "test-licensed-tone"
TEST_LICENSE: Final = License(
    "test-model-use", "Test Model Use Agreement", "tests/daemon/tone_engine.py"
)


class LicensedToneEngine(ToneEngine):
    engine_id = LICENSED_ENGINE_ID
    license = TEST_LICENSE
