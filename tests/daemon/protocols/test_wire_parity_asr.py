"""Qwen3-ASR at the wire against upstream's own ``Qwen3ASRModel.transcribe``.

The tiny checkpoints (seed 0, which never stops by itself, ``EOS_SEED``,
which does, and ``ODD_SEED`` of the writer's unfriendly ``ODD`` shape: odd
widths, special tokens at other ids, LM-head rows past the tokenizer's)
served by ``hexvoice serve --backend cpu``, asked through the
``openai`` SDK (httpx over the Unix socket: ``json`` and ``verbose_json``)
and the ``wyoming`` library (transcribe, audio-start, chunks, audio-stop), for
WAV files at 8, 16, 22.05 and 44.1 kHz, mono and stereo, of odd lengths.
Upstream is given what a user gives it: the same WAV file's path (librosa
reads it, ``to_mono`` takes the channel mean, ``librosa.resample`` (soxr HQ)
makes 16 kHz, a peak over 1 is divided out), the same language hint, greedy
decoding.  Text and language must be equal, character for character.

Attention windows: the engine attends within upstream's encoder windows
(n_window_infer frames, 4 s for the tiny model), as upstream's FA2 and vLLM
backends do; upstream's transformers path attends over the whole utterance.
A clip within one window is compared with plain ``transcribe``; a longer one
with ``transcribe`` under upstream's own window mask
(``scripts.qwen3.asr.oracle.windowed_attention``).

Stops: upstream's ``generate`` (modeling_qwen3_asr.py) defaults
``eos_token_id`` to the real vocabulary's ids of ``<|im_end|>`` and
``<|endoftext|>`` (151645, 151643); the tiny vocabulary has those tokens at
other ids (past its BPE merges), so ``Upstream`` hands transcribe's
``generate`` the checkpoint's own ids of the same two tokens, which is what the
engine stops at and what upstream does on the real checkpoint.  Without it
upstream's transcribe never stops on a tiny vocabulary (measured: all 512
steps on a clip the EOS_SEED model otherwise stops on).

Threads: upstream runs on one torch thread (restored after): the tiny model's
steps are too small to share, and two threads beside a busy service took 20x
as long (measured: 53 steps 0.3 s on one thread, 5-6 s on two, 2 cores).

Lengths: Wyoming carries no ``max_new_tokens`` and the tiny bundle's KV bucket
holds fewer rows than upstream's default 512 new tokens, so the models are
served as copies whose ``max_new_tokens`` (the default and bound) is ``STEPS``
(seed 0), ``EOS_CAP`` (EOS_SEED) and ``ODD_CAP`` (ODD), and upstream's
``Qwen3ASRModel`` the same ``max_new_tokens`` (its ``from_pretrained``
argument).  The EOS_SEED model stops by itself on the ``stops`` clips, before
that cap, on both sides.

The ODD model is asked only the ``odd`` clips (time: its build is a third).
On them upstream's greedy runs pick padded ids, past the tokenizer's tokens
(``test_upstream_picks_padded_rows_on_the_odd_clips``): they decode to
nothing and are embedded as any other id.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("qwen_asr")

from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncClient  # noqa: E402

from scripts.qwen3.asr import oracle  # noqa: E402
from tests.daemon.conftest import Daemon, ServiceVoice, copy_voice  # noqa: E402
from tests.daemon.voice_clients import bundle_name, sdk, serving  # noqa: E402
from tests.qwen3_bundles import TINY_KV  # noqa: E402

#: New tokens at most of the served seed-0 copy and of upstream for it
#: (the seed-0 model never stops by itself).
STEPS: Final = 16
#: The same for the EOS_SEED model: past the stops of the ``stops`` clips,
#: and within the KV rows every clip's prompt leaves.
EOS_CAP: Final = 60
#: The same for the ODD model: past its stop on "22k" (measured: after 44
#: tokens) and within the KV rows the ``odd`` clips' prompts leave.
ODD_CAP: Final = 60
#: The peak of the float WAV clip (upstream divides a peak above 1 out).
LOUD_PEAK: Final = 1.6
#: The KV rows of the tiny bundle: prompt + generated tokens fit in these.
KV_ROWS: Final = TINY_KV[-1]
#: Frames Wyoming chunks carry: odd, so chunks end mid-window and mid-hop.
CHUNK_FRAMES: Final = 1237
#: Whisper's mel hop (WhisperFeatureExtractor hop_length) at 16 kHz.
HOP: Final = 160
READ_TIMEOUT_S: Final = 60


@dataclass(frozen=True)
class Clip:
    """A test clip as its WAV file describes it."""

    rate: int
    frames: int  # odd counts, none a multiple of a hop or a second
    kind: str = "speechy"  # one of SIGNALS
    channels: int = 1
    #: the hint sent to the service (a code or a name) ...
    language: str | None = None
    #: ... and the same language as a user names it to upstream
    named: str | None = None
    #: float WAV with a peak above 1 (upstream divides it out)
    loud: bool = False
    seed: int = 0
    #: the EOS_SEED model stops by itself on it within EOS_CAP (measured);
    #: only these are asked of that model (the others would run to the cap)
    stops: bool = False
    #: asked of the ODD model too
    odd: bool = False


#: 8 kHz to 44.1 kHz, stereo, a forced language (code and name), a peak > 1,
#: and two clips past one encoder window.  The tiny prefill bucket (128 rows)
#: holds ~8 s of audio; every clip stays below, so neither side cuts it.  The
#: ``stops`` ones: the EOS_SEED model's EOS after 26, 17, 41 and 53 tokens.
#: The ``odd`` ones: forced English of a loud float WAV (HTTP only), a
#: 22.05 kHz clip past one of the ODD model's 3 s windows that it stops on by
#: itself (after 44 tokens), and stereo forced Chinese; its greedy ids hold 2,
#: 1 and 1 padded ids on them (measured).
CLIPS: Final = {
    "8k": Clip(8000, 18_961, "tone+noise", seed=1, stops=True),
    "16k-loud-en": Clip(
        16000, 45_011, language="en", named="English", loud=True, odd=True
    ),
    "22k": Clip(22050, 68_357, seed=3, odd=True),
    "44k-stereo": Clip(44100, 151_213, channels=2, seed=4),
    "44k-stereo-zh": Clip(
        44100, 98_003, "quiet", 2, "zh", "Chinese", stops=True, odd=True
    ),
    "22k-two-windows": Clip(22050, 117_613, "noise", seed=6, stops=True),
    "8k-two-windows": Clip(
        8000, 44_327, "tone", language="eNGLISH", named="English", stops=True
    ),
}


def _mono(c: Clip) -> np.ndarray:
    rng = np.random.default_rng(c.seed)
    t = np.arange(c.frames) / c.rate
    noise = rng.standard_normal(c.frames)
    if c.kind == "tone":
        return 0.5 * np.sin(2 * np.pi * 440.0 * t)
    if c.kind == "tone+noise":
        return 0.5 * np.sin(2 * np.pi * 220.0 * t) + 0.05 * noise
    if c.kind == "noise":
        return 0.4 * noise
    if c.kind == "quiet":
        return 0.01 * noise
    # noise, a rising chirp and pauses
    voiced = np.sin(2 * np.pi * (180 + 250 * t) * t) * (t % 1.1 < 0.7)
    return 0.25 * noise + 0.5 * voiced


def _samples(c: Clip) -> np.ndarray:
    """[frames, channels]: the channels differ (their mean is what is heard)."""
    mono = _mono(c)
    out = np.stack([mono * (1 - 0.3 * k) for k in range(c.channels)], axis=1)
    if c.loud:
        out = out / np.abs(out).max() * LOUD_PEAK
    return out.astype(np.float32)


def _wav(c: Clip) -> bytes:
    buf = io.BytesIO()
    subtype = "FLOAT" if c.loud else "PCM_16"
    sf.write(buf, _samples(c), c.rate, format="WAV", subtype=subtype)
    return buf.getvalue()


def _window_s(model_dir: Path) -> float:
    """Seconds of one encoder attention window (n_window_infer mel frames)."""
    import json

    config = json.loads((model_dir / "config.json").read_text())
    frames = config["thinker_config"]["audio_config"]["n_window_infer"]
    return frames * HOP / oracle.SAMPLE_RATE


@dataclass(frozen=True)
class Said:
    """What one side said: parsed text and language name ("" for none)."""

    text: str
    language: str
    steps: int = 0  # upstream's generated tokens (its LM-head calls)
    prompt: int = 0  # upstream's prompt ids
    padded: int = 0  # upstream's generated ids past the tokenizer's tokens


class Upstream:
    """One checkpoint in upstream's own ``Qwen3ASRModel`` (transformers backend)."""

    def __init__(self, model_dir: Path) -> None:
        import torch
        from qwen_asr.inference.qwen3_asr import Qwen3ASRModel

        self.asr = Qwen3ASRModel.from_pretrained(str(model_dir), dtype=torch.float32)
        self.window_s = _window_s(model_dir)
        # the EOS tokens at this vocabulary's ids (module doc: Stops)
        eos = oracle.eos_ids(self.asr.processor)
        generate = partial(self.asr.model.generate, eos_token_id=eos)
        self.sequences: list[Any] = []

        def kept(*args: Any, **kwargs: Any) -> Any:
            out = generate(*args, **kwargs)
            self.sequences.append(out.sequences[0])
            return out

        self.asr.model.generate = kept

    def transcribe(self, path: Path, clip: Clip, max_new_tokens: int) -> Said:
        """``transcribe(path)``; windowed attention past one window."""
        import torch

        seconds = clip.frames / clip.rate
        self.asr.max_new_tokens = max_new_tokens
        language = clip.named
        calls = []
        head = self.asr.model.thinker.lm_head
        hook = head.register_forward_hook(lambda *_: calls.append(1))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # module doc: Threads
        try:
            with torch.no_grad():
                if seconds > self.window_s:
                    with oracle.windowed_attention(self.asr.model):
                        (out,) = self.asr.transcribe(str(path), language=language)
                else:
                    (out,) = self.asr.transcribe(str(path), language=language)
        finally:
            torch.set_num_threads(threads)
            hook.remove()
        x16k = oracle.normalize(*sf.read(path, dtype="float32"))
        prompt = oracle.inputs(self.asr.processor, x16k, language=language)
        n = prompt["input_ids"].shape[1]
        ids = self.sequences[-1][n:]
        padded = int((ids >= len(self.asr.processor.tokenizer)).sum())
        return Said(out.text, out.language, len(calls), n, padded)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wire_asr")
    out = {}
    for name, clip in CLIPS.items():
        out[name] = root / f"{name}.wav"
        out[name].write_bytes(_wav(clip))
    return out


#: (served name, new tokens at most) of each model
SERVED: Final = {
    "seed0": ("tiny-asr-seed0", STEPS),
    "eos": ("tiny-asr-eos", EOS_CAP),
    "odd": ("tiny-asr-odd", ODD_CAP),
}


@pytest.fixture(scope="module")
def checkpoints(
    tiny_asr_model: Path, tiny_asr_eos_model: Path, tiny_asr_odd_model: Path
) -> dict[str, Path]:
    return {"seed0": tiny_asr_model, "eos": tiny_asr_eos_model,
            "odd": tiny_asr_odd_model}  # fmt: skip


@pytest.fixture(scope="module")
def upstream(checkpoints: dict[str, Path]) -> dict[str, Upstream]:
    return {model: Upstream(path) for model, path in checkpoints.items()}


@pytest.fixture(scope="module")
def daemon(
    tmp_path_factory,
    tiny_asr_bundle: Path,
    tiny_asr_eos_bundle: Path,
    tiny_asr_odd_bundle: Path,
) -> Iterator[Daemon]:
    """The models, copies renamed and with their ``max_new_tokens``."""
    root = tmp_path_factory.mktemp("wire_asr_d")
    served = []
    bundles = {"seed0": tiny_asr_bundle, "eos": tiny_asr_eos_bundle,
               "odd": tiny_asr_odd_bundle}  # fmt: skip
    for model, bundle in bundles.items():
        name, cap = SERVED[model]
        built = ServiceVoice(bundle, bundle_name(bundle), oracle.SAMPLE_RATE, {})
        served.append(copy_voice(built, root / name, name, max_new_tokens=cap))
    sections = {
        "voices": [{"bundle": str(v.bundle)} for v in served],
        "engine": {"backend": "cpu"},
    }
    with serving(root / "service", served[0], **sections) as d:
        yield d


@pytest.fixture(scope="module")
def said(upstream, files) -> Callable[[str, str], Said]:
    """Upstream's transcription of (clip, model), each made once."""

    @cache
    def heard(name: str, model: str) -> Said:
        got = upstream[model].transcribe(files[name], CLIPS[name], SERVED[model][1])
        print(f"\n{name} {model}: upstream {got.steps} steps (prompt "
              f"{got.prompt}, {got.padded} padded) {got.language!r} "
              f"{got.text[:32]!r}")  # fmt: skip
        return got

    return heard


def _models(name: str) -> list[str]:
    """The models a clip is asked of: seed 0, EOS_SEED where it stops, ODD
    where it is an ``odd`` clip."""
    c = CLIPS[name]
    return ["seed0", *(["eos"] if c.stops else []), *(["odd"] if c.odd else [])]


def _want(said, name: str, model: str) -> Said:
    want = said(name, model)
    cap = SERVED[model][1]
    assert want.prompt + cap <= KV_ROWS  # the bucket never cut the engine short
    if model == "eos":  # it stops by itself before the cap
        assert want.steps < cap, want.steps
    return want


def _http(d: Daemon, model: str, path: Path, clip: Clip, fmt: str) -> Said:
    client = sdk(d, timeout=READ_TIMEOUT_S)
    kwargs: dict[str, Any] = {"language": clip.language} if clip.language else {}
    out = client.audio.transcriptions.create(
        model=model,
        file=(path.name, path.read_bytes()),
        response_format=fmt,  # type: ignore[arg-type]
        **kwargs,
    )
    return Said(out.text, getattr(out, "language", None) or "")


async def _wyoming(d: Daemon, model: str, path: Path, clip: Clip) -> Said:
    """The file's int16 samples as a microphone streams them."""
    pcm, rate = sf.read(path, dtype="int16", always_2d=True)
    assert clip.channels == pcm.shape[1] and rate == clip.rate
    async with AsyncClient.from_uri(d.uri) as c:
        await c.write_event(Transcribe(name=model, language=clip.language).event())
        await c.write_event(AudioStart(rate, 2, clip.channels).event())
        for i in range(0, len(pcm), CHUNK_FRAMES):
            block = pcm[i : i + CHUNK_FRAMES].astype("<i2").tobytes()
            await c.write_event(AudioChunk(rate, 2, clip.channels, block).event())
        await c.write_event(AudioStop().event())
        while True:
            e = await asyncio.wait_for(c.read_event(), READ_TIMEOUT_S)
            assert e is not None and e.type != "error", e and e.data
            if Transcript.is_type(e.type):
                t = Transcript.from_event(e)
                return Said(t.text, t.language or "")


@pytest.mark.parametrize("name", list(CLIPS))
def test_http_transcriptions_equal_upstreams_transcribe(
    name: str, daemon: Daemon, said, files
) -> None:
    """``json``: the text; ``verbose_json``: the text and upstream's language
    name ("" where upstream names none)."""
    for model in _models(name):
        served, want = SERVED[model][0], _want(said, name, model)
        got = _http(daemon, served, files[name], CLIPS[name], "json")
        assert got.text == want.text, model
        got = _http(daemon, served, files[name], CLIPS[name], "verbose_json")
        assert (got.text, got.language) == (want.text, want.language), model


#: Wyoming carries 16-bit samples: no peak above 1 (the loud clip's is 1.6).
WYOMING_CLIPS: Final = [name for name, c in CLIPS.items() if not c.loud]


@pytest.mark.parametrize("name", WYOMING_CLIPS)
def test_wyoming_transcripts_equal_upstreams_transcribe(
    name: str, daemon: Daemon, said, files
) -> None:
    """The ``transcript`` event's text and language (absent where upstream
    names none)."""
    for model in _models(name):
        served, want = SERVED[model][0], _want(said, name, model)
        got = asyncio.run(_wyoming(daemon, served, files[name], CLIPS[name]))
        assert (got.text, got.language) == (want.text, want.language), model


def test_upstream_picks_padded_rows_on_the_odd_clips(said) -> None:
    """The parity above covers padded ids: upstream's greedy runs of the ODD
    model pick LM-head rows past the tokenizer's tokens on these clips."""
    picked = {name: said(name, "odd").padded for name, c in CLIPS.items() if c.odd}
    assert all(picked.values()), picked
