"""The indextts2 engine on the tiny bundle (conftest ``engine``, onnxruntime
CPU): it declares zero-shot cloning with consent; a voice cloned from the
clip speaks upstream's own ``infer`` audio under upstream's draws (the
engine's ``draws`` seam fed torch's stream); with its own NumPy draws one
seed gives the same bytes; bad requests are refused before any graph runs,
naming what is wrong; nothing loads without the licence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import torch
from daemon.sdk.audio.shaping import to_int16
from daemon.sdk.license import LicenseNotAccepted
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions
from scripts.common.parity import snr_db

from hexvoice_indextts.oracle.draws import TorchDraws
from hexvoice_indextts.oracle.run import TEXT, TINY_MEL_TOKENS

AUDIO_DB = 90.0
SEED = 0
TINY = {"max_mel_tokens": TINY_MEL_TOKENS}


@pytest.fixture(scope="module")
def voice(engine: Any, clip: Path) -> Any:
    audio, rate = sf.read(clip, dtype="float32")
    return engine.clone(audio, rate)


def pcm(engine: Any, text: str, **options: Any) -> bytes:
    chunks = list(engine.synthesize(text, SynthesisOptions(**options)))
    assert chunks and chunks[-1].end_of_segment
    return b"".join(to_int16(c.audio) for c in chunks)


def test_it_declares_cloning_with_consent(engine: Any) -> None:
    caps = engine.capabilities()
    assert caps.sample_rate_out == 22050 and caps.speed_range is None
    assert caps.sentence_pause_s == 0.2
    c = caps.cloning
    assert c.consent == "required" and c.transcript == "unused"
    # the tiny buckets hold 0.9 s of clip (48 w2v-BERT rows, 80 mel frames)
    assert (c.min_seconds, c.max_seconds) == (0.5, 0.9)
    (v,) = engine.voices()
    assert "cloned voices" in v.description
    # the tiny prefill bucket holds 64 - 34 - 3 text pieces, not upstream's 120
    assert engine.model.utterance.max_pieces == 27


def test_a_cloned_voice_speaks_upstreams_audio(
    engine: Any, voice: Any, runs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        voice.engine_id == "indextts2"
        and voice.model == engine.capabilities().cloning.model
    )
    monkeypatch.setattr(engine, "draws", lambda seed: TorchDraws())
    torch.manual_seed(SEED)
    got = np.frombuffer(pcm(engine, TEXT, voice_print=voice, extra=TINY), "<i2")
    want = runs.first.reshape(-1)
    assert got.shape == want.shape
    db = snr_db(want, got)
    print(f"engine vs upstream's infer: {db:.1f} dB")
    assert db >= AUDIO_DB, db


def test_one_seed_gives_the_same_bytes(engine: Any, voice: Any) -> None:
    a = pcm(engine, TEXT, voice_print=voice, seed=7, extra=TINY)
    assert a == pcm(engine, TEXT, voice_print=voice, seed=7, extra=TINY)
    assert a != pcm(engine, TEXT, voice_print=voice, seed=8, extra=TINY)
    weighted = {**TINY, "emo_vector": [0.6, 0, 0, 0, 0, 0, 0, 0.2]}
    assert a != pcm(engine, TEXT, voice_print=voice, seed=7, extra=weighted)


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        (TEXT, {}, "speaks only in cloned voices"),
        ("   ", {"voice_print": True}, "nothing to say"),
        (TEXT, {"voice_print": True, "extra": {"emo_alpha": 1.5}}, "emo_alpha"),
        (TEXT, {"voice_print": True, "extra": {"emo_vector": [0.1] * 7}}, "emo_vector"),
        (TEXT, {"voice_print": True, "extra": {"emotion": "happy"}}, "emotion"),
        (TEXT, {"voice_print": True, "speed": 1.5}, "not adjustable"),
    ],
)
def test_bad_requests_are_refused_first(
    engine: Any, voice: Any, text: str, options: dict[str, Any], message: str
) -> None:
    if options.get("voice_print") is True:
        options = {**options, "voice_print": voice}
    with pytest.raises(ValueError, match=message):
        engine.synthesize(text, SynthesisOptions(**options))
    assert pcm(engine, "Yes.", voice_print=voice, seed=1, extra=TINY)  # still speaks


def test_a_clip_it_cannot_use_is_refused(engine: Any) -> None:
    with pytest.raises(ValueError, match="silent"):
        engine.clone(np.zeros(16000, np.float32), 16000)


def test_nothing_loads_without_the_licence(bundle: Any) -> None:
    with pytest.raises(
        LicenseNotAccepted, match="accept_licenses: \\[bilibili-model-use\\]"
    ):
        with open_engine(bundle.bundle, "cpu"):
            pass


def test_the_engine_runs_without_torch_or_the_build_code() -> None:
    """Where the engine runs (a board's venv, hexvoice's wheel) there is no
    torch, transformers or scripts/: its modules import without them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('torch', 'transformers', 'scripts', 'onnx'): sys.modules[m] = None\n"
        "import hexvoice_indextts.engine.engine\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_cancel_stops_between_graph_calls_and_the_engine_goes_on(
    engine: Any, voice: Any
) -> None:
    """Cancelled before the GPT's first graph call, and again after the first
    segment's audio (a text of two segments): no more audio either way; then
    the same request speaks its bytes whole."""
    from daemon.sdk.cancel import Cancelled, CancelToken

    options = SynthesisOptions(voice_print=voice, seed=3, extra=TINY)
    early = CancelToken()
    early.cancel("client left")
    with pytest.raises(Cancelled, match="client left"):
        list(engine.synthesize(TEXT, options, early))
    long = " ".join([TEXT] * 10)  # past 120 pieces: two segments
    late = CancelToken()
    chunks = engine.synthesize(long, options, late)
    first = [next(chunks)]
    while not first[-1].end_of_segment:
        first.append(next(chunks))
    late.cancel()
    with pytest.raises(Cancelled):
        list(chunks)
    heard = b"".join(to_int16(c.audio) for c in first)
    whole = pcm(engine, long, voice_print=voice, seed=3, extra=TINY)
    assert whole.startswith(heard) and len(whole) > len(heard)
