"""Qwen3-TTS at the wire against upstream's own ``generate_custom_voice`` and
``generate_voice_clone(..., x_vector_only_mode=True)``.

The tiny CustomVoice and Base bundles (tests/qwen3_bundles.py) behind
``hexvoice serve --backend cpu``, served as copies whose sampling is greedy
and whose ``max_new_tokens`` is ``FRAMES`` (Wyoming carries no engine knobs),
upstream given the same; a voice registered over HTTP (``POST /v1/voices``)
from a 44.1 kHz stereo 16-bit WAV, and upstream given the same file's path
(librosa reads it, takes the channel mean and resamples to 24 kHz).  Asked
through the ``openai`` SDK (``wav`` and ``pcm``, ``"stream": false``; a
seed, which greedy decoding leaves unused) and the ``wyoming`` library
(``synthesize``), in two speakers and the cloned voice, zh, en and mixed.

A response that is not streamed is upstream's decode of the same codes as
upstream chunks it (the bundles carry codec_325, upstream's chunk and its
context), converted as the service converts (``to_int16``; the codec's
24 kHz is OpenAI's pcm rate: no resampling): equal length, and its SNR
against upstream's decode cast to float64 (int16 the same way) at least
upstream float32's own there less FLOOR_MARGIN_DB (scripts/common/floor.py).
A streamed one (``"stream": true``) keeps the SNR the bundle's manifest
states (params.codec.stream_snr_db, the tiny bundles' approximate windows).
``pytest -s`` prints the measured numbers.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest
import soundfile as sf
import yaml

from tests.qwen3_fixtures import require_qwen_tts

require_qwen_tts()

from wyoming.audio import AudioChunk, AudioStop  # noqa: E402
from wyoming.client import AsyncClient  # noqa: E402
from wyoming.event import Event  # noqa: E402
from wyoming.tts import (  # noqa: E402
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from daemon.protocols.openai.encoders import OPENAI_PCM_RATE  # noqa: E402
from daemon.sdk.audio.shaping import to_int16  # noqa: E402
from scripts.common.floor import snr_gate  # noqa: E402
from scripts.common.parity import snr_db  # noqa: E402
from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice  # noqa: E402
from tests.daemon.voice_clients import (  # noqa: E402
    bundle_name,
    cloning_setup,
    sdk,
    serving,
)
from tests.qwen3_bundles import TTS_FIRST_FRAMES  # noqa: E402

#: Frames at most on both sides (the tiny runs may never stop; the engine
#: parity test's cap): 24 frames fit codec_325 in one call, as upstream's
#: first chunk.
FRAMES: Final = 24
SEED: Final = 7
RATE: Final = 24000
#: the 12 Hz codec's samples per frame at 24 kHz (decode_upsample_rate)
SAMPLES_PER_FRAME: Final = 1920
#: The clip: 44.1 kHz stereo, an odd length within the tiny Base bundle's
#: largest x-vector bucket (2 s), so neither side cuts it.
CLIP_RATE, CLIP_FRAMES = 44100, 74_971
CLONE: Final = "anna"
#: Streamed audio pooled over the cases vs the manifest's SNR (measured on 400
#: frames of uniform random codes); per utterance it spread 5.8-8.0 dB around
#: the tiny bundles' 6.9.
STREAM_TOLERANCE_DB: Final = 1.0
WAV_HEADER_BYTES: Final = 44
READ_TIMEOUT_S: Final = 120


@dataclass(frozen=True)
class Case:
    voice: str  # a CustomVoice speaker, or CLONE
    text: str  # a key of scripts/qwen3/tts/tiny.TEXTS
    language: str | None  # what the client sends; None: auto
    upstream: str  # the same language as upstream names it

    @property
    def cloned(self) -> bool:
        return self.voice == CLONE


CASES: Final = {
    "ryan-en": Case("ryan", "en", "en", "english"),
    "serena-zh": Case("serena", "zh", "zh", "chinese"),
    "serena-mixed": Case("serena", "mixed", None, "auto"),
    "clone-en": Case(CLONE, "en", "en", "english"),
    "clone-zh": Case(CLONE, "zh", "zh", "chinese"),
    "clone-mixed": Case(CLONE, "mixed", None, "auto"),
}


def _clip() -> np.ndarray:
    """[frames, 2]: a voiced sweep with harmonics, the channels differing."""
    t = np.arange(CLIP_FRAMES) / CLIP_RATE
    phase = 2 * np.pi * np.cumsum(130 + 40 * np.sin(2 * np.pi * 0.6 * t)) / CLIP_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 9))
    mono = 0.2 * voiced * (0.5 + 0.5 * np.sin(2 * np.pi * 3 * t) ** 2)
    noise = 0.01 * np.random.default_rng(5).standard_normal(CLIP_FRAMES)
    return np.stack([mono + noise, 0.7 * mono - noise], axis=1).astype(np.float32)


@pytest.fixture(scope="module")
def clip_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wire_qwen3tts_clip") / "ref.wav"
    sf.write(path, _clip(), CLIP_RATE, format="WAV", subtype="PCM_16")
    return path


def _greedy_copy(bundle: Path, dest: Path) -> ServiceVoice:
    """``bundle`` served greedy with at most FRAMES frames."""
    built = ServiceVoice(bundle, bundle_name(bundle), RATE, {})
    params = yaml.safe_load((bundle / "voice.yaml").read_text())["params"]
    sampling = {**params["sampling"], "do_sample": False,
                "subtalker_do_sample": False, "max_new_tokens": FRAMES}  # fmt: skip
    return copy_voice(built, dest, sampling=sampling)


@pytest.fixture(scope="module")
def daemon(
    tmp_path_factory, tiny_tts_custom_bundle: Path, tiny_tts_base_bundle: Path,
    clip_path: Path,
) -> Iterator[Daemon]:  # fmt: skip
    """Both copies served, the clip registered as CLONE."""
    root = tmp_path_factory.mktemp("wire_qwen3tts")
    custom = _greedy_copy(tiny_tts_custom_bundle, root / "custom")
    base = _greedy_copy(tiny_tts_base_bundle, root / "base")
    voice, _, sections = cloning_setup(root, base.bundle, RATE, custom.bundle)
    with serving(root / "service", voice, **sections) as d:
        with d.http_client(timeout=READ_TIMEOUT_S) as c:
            files = {"file": ("ref.wav", clip_path.read_bytes(), "audio/wav")}
            r = c.post("/v1/voices", data={"name": CLONE}, files=files)
        assert r.status_code == 201, r.text
        yield d


@dataclass(frozen=True)
class Said:
    """Upstream's run: its float32 output, and its codes decoded in float64."""

    wav: np.ndarray
    wav64: np.ndarray
    frames: int


@pytest.fixture(scope="module")
def upstream(tiny_tts_custom: Path, tiny_tts_base: Path) -> dict[str, Any]:
    from scripts.qwen3.tts import oracle

    return {"custom": oracle.load(tiny_tts_custom), "base": oracle.load(tiny_tts_base)}


def _said(upstream: dict[str, Any], case: Case, clip_path: Path) -> Said:
    """The top-level call a user makes, then its codes (the same greedy run
    through the oracle) decoded by upstream in float64 for the floor."""
    import torch

    from scripts.qwen3.tts import oracle, tiny
    from scripts.qwen3.tts import windows as codec
    from scripts.qwen3.tts.upstream import torch_threads

    text, greedy = tiny.TEXTS[case.text], {"do_sample": False,
                                           "subtalker_dosample": False}  # fmt: skip
    tts = upstream["base" if case.cloned else "custom"]
    with torch_threads(1), torch.no_grad():
        if case.cloned:
            ref = str(clip_path)
            (wav,), sr = tts.generate_voice_clone(
                text, case.upstream, ref_audio=ref, x_vector_only_mode=True,
                max_new_tokens=FRAMES, **greedy,
            )  # fmt: skip
            (item,) = tts.create_voice_clone_prompt(ref, x_vector_only_mode=True)
            xvector = item.ref_spk_embedding.float().numpy()
            run = oracle.greedy(tts, text, case.upstream, xvector=xvector,
                                max_new_tokens=FRAMES)  # fmt: skip
        else:
            (wav,), sr = tts.generate_custom_voice(
                text, case.voice, case.upstream, max_new_tokens=FRAMES, **greedy
            )
            run = oracle.greedy(tts, text, case.upstream, case.voice,
                                max_new_tokens=FRAMES)  # fmt: skip
        decoder, codes = tts.model.speech_tokenizer, run.codes.T
        # the oracle's codes are the top-level call's: upstream decodes them to it
        np.testing.assert_array_equal(codec.upstream_decode(decoder, codes), wav)
        wav64 = codec.upstream_decode(decoder, codes, float64=True)
    assert sr == RATE
    return Said(np.asarray(wav, np.float32), wav64, len(run.codes))


@pytest.fixture(scope="module")
def said(upstream, clip_path: Path) -> dict[str, Said]:
    return {name: _said(upstream, case, clip_path) for name, case in CASES.items()}


def _int16(audio: np.ndarray) -> np.ndarray:
    return np.frombuffer(to_int16(audio), "<i2")


def _speech(d: Daemon, case: Case, fmt: str, stream: bool) -> tuple[bytes, str]:
    """The body and its X-Hexvoice-Streaming header, through the SDK."""
    extra: dict[str, Any] = {"seed": SEED, "stream": stream}
    if case.language:
        extra["language"] = case.language
    got = sdk(d, timeout=READ_TIMEOUT_S).audio.speech.create(
        model="tts-1", voice=case.voice, input=_text(case),
        response_format=fmt, extra_body=extra,  # type: ignore[arg-type]
    )  # fmt: skip
    return got.read(), got.response.headers["x-hexvoice-streaming"]


def _text(case: Case) -> str:
    from scripts.qwen3.tts import tiny

    return tiny.TEXTS[case.text]


async def _wyoming(d: Daemon, case: Case) -> bytes:
    """The PCM of one ``synthesize``, as the wyoming library writes it; the
    library writes a voice's language only when it has no name, so the
    language is added beside the name (hexvoice reads ``voice.language``)."""
    data = Synthesize(_text(case), voice=SynthesizeVoice(name=case.voice)).event().data
    if case.language:
        data["voice"]["language"] = case.language
    pcm = b""
    async with AsyncClient.from_uri(d.uri) as c:
        await c.write_event(Event("synthesize", data))
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None and e.type != "error", e and e.data
            if AudioChunk.is_type(e.type):
                pcm += AudioChunk.from_event(e).audio
            if AudioStop.is_type(e.type):
                return pcm


def _check_exact(name: str, what: str, said: Said, got: np.ndarray) -> float:
    """Equal length, and SNR vs float64 >= upstream float32's less the margin."""
    want = _int16(said.wav)
    assert got.shape == want.shape == (said.frames * SAMPLES_PER_FRAME,), what
    gate = snr_gate(name, what, _int16(said.wav64), want, got)
    vs_upstream = snr_db(want.astype(np.float64), got.astype(np.float64))
    print(f"\n{name} {what}: {said.frames} frames, {len(got)} samples; {gate}; "
          f"{vs_upstream:.1f} dB vs upstream's int16")  # fmt: skip
    assert gate.passed, gate
    return vs_upstream


@pytest.mark.parametrize("name", list(CASES))
def test_not_streamed_is_upstreams_decode(name: str, daemon: Daemon, said) -> None:
    """HTTP wav and pcm with ``"stream": false`` and Wyoming ``synthesize``."""
    case, want = CASES[name], said[name]
    wav, how = _speech(daemon, case, "wav", stream=False)
    assert how == "after-synthesis"
    audio, rate = sf.read(io.BytesIO(wav), dtype="int16")
    assert rate == RATE
    _check_exact(name, "wav", want, audio)
    pcm, how = _speech(daemon, case, "pcm", stream=False)
    assert OPENAI_PCM_RATE == RATE and how == "after-synthesis"
    assert pcm == wav[WAV_HEADER_BYTES:]  # the same samples, headerless
    wyoming = asyncio.run(_wyoming(daemon, case))
    assert wyoming == wav[WAV_HEADER_BYTES:]


@pytest.fixture(scope="module")
def stated(tiny_tts_custom_bundle: Path, tiny_tts_base_bundle: Path) -> float:
    """What the manifests say of streamed audio: one figure, both bundles
    having the same tiny codec and windows."""
    said = set()
    for bundle in tiny_tts_custom_bundle, tiny_tts_base_bundle:
        params = yaml.safe_load((bundle / "voice.yaml").read_text())["params"]
        said.add(float(params["codec"]["stream_snr_db"]))
    (snr,) = said
    return snr


async def _wyoming_stream(d: Daemon, case: Case) -> bytes:
    """The PCM of a synthesize-start / -chunk / -stop stream (language added
    beside the name, as in ``_wyoming``), up to synthesize-stopped."""
    start = SynthesizeStart(voice=SynthesizeVoice(name=case.voice)).event()
    if case.language:
        start.data["voice"]["language"] = case.language
    pcm = b""
    async with AsyncClient.from_uri(d.uri) as c:
        for event in (start, SynthesizeChunk(_text(case)).event(),
                      SynthesizeStop().event()):  # fmt: skip
            await c.write_event(event)
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None and e.type != "error", e and e.data
            if AudioChunk.is_type(e.type):
                pcm += AudioChunk.from_event(e).audio
            if SynthesizeStopped.is_type(e.type):
                return pcm


def test_streamed_keeps_the_stated_snr(daemon: Daemon, said, stated: float) -> None:
    """HTTP ``"stream": true`` and a Wyoming text stream: the same samples,
    upstream's length.  An utterance within the first window is upstream's
    decode; over the others (their samples pooled: the manifest's figure is
    of 400 frames) the SNR vs upstream is the manifest's within
    STREAM_TOLERANCE_DB (per utterance it spreads by about as much)."""
    signal = noise = 0.0
    for name, case in CASES.items():
        wav, how = _speech(daemon, case, "wav", stream=True)
        assert how == "during-synthesis"
        got = np.frombuffer(wav[WAV_HEADER_BYTES:], "<i2")
        assert asyncio.run(_wyoming_stream(daemon, case)) == got.tobytes()
        want = said[name]
        if want.frames <= TTS_FIRST_FRAMES:
            _check_exact(name, "streamed wav", want, got)
            continue
        ref = _int16(want.wav).astype(np.float64)
        assert got.shape == ref.shape
        snr = snr_db(ref, got.astype(np.float64))
        print(f"\n{name} streamed: {want.frames} frames, {snr:.1f} dB vs upstream")
        signal += float(np.sum(ref**2))
        noise += float(np.sum((got - ref) ** 2))
    pooled = 10 * np.log10(signal / noise)
    print(f"streamed, pooled: {pooled:.2f} dB vs upstream (manifest: {stated} dB)")
    assert abs(pooled - stated) <= STREAM_TOLERANCE_DB


def test_the_voices_say_what_is_exact(daemon: Daemon) -> None:
    with daemon.http_client() as c:
        voices = {v["name"]: v for v in c.get("/v1/audio/voices").json()["voices"]}
    for name in ("ryan", "serena"):
        assert "dB SNR from upstream's decode" in voices[name]["description"]
        assert "not streamed: upstream's decode" in voices[name]["description"]
