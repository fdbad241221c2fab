"""A cloned voice against upstream's chain, on the CPU backend.

Upstream's ``_get_ref_spec``: the clip at 32 kHz by torchaudio's Resample
(when at another rate), peak-limited, its spectrogram; that copy at 16 kHz by
Resample again, its fbank -> ERes2NetV2; ge = PReLU(ref_enc(spec) + sv_proj),
averaged over the aux clips.  Here the resampler is torchaudio's arithmetic in
torch (tests/daemon/sdk/audio/torchaudio_resample.py), the sv and SoVITS
models are the test voice's torch modules, and the engine's print is held to
them, at 32 kHz (no first resampling) and at 44.1 kHz, with an aux clip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.engines.gptsovits.reference.audio import spec_copy, sv_copy
from daemon.engines.gptsovits.reference.aux import mean_style
from daemon.engines.gptsovits.reference.spectrogram import linear_spectrogram
from daemon.sdk.audio.fbank import kaldi_fbank
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.cloning import VoicePrint
from daemon.sdk.local import open_engine
from daemon.sdk.tts import SynthesisOptions
from scripts.common.parity import snr_db

torch = pytest.importorskip("torch")

from tests.daemon.sdk.audio.torchaudio_resample import oracle  # noqa: E402

SPOKEN, TRANSCRIPT, TEXT, CLIP_SECONDS = "你好。你好。", "你好。", "我们走吧。", 3.2
RATE, CD_RATE = 32000, 44100
#: float32's own floor: torch's float32 convolution and our float64 sum agree
#: to the last bit or two, ~140 dB on the copies and the style vectors (soxr,
#: as before: 26 dB on the 16 kHz copy, 55 dB on the embedding and ge)
MIN_COPY_DB, MIN_STYLE_DB = 130.0, 120.0
#: the decoded audio: the tiny test voice's decoder turns a 1-ulp change of ge
#: alone into 94-96 dB (measured), so no float32 ge can do much better (soxr,
#: as before: 64 dB)
MIN_AUDIO_DB = 85.0
#: broadband noise on the 44.1 kHz clips, so its first resampling filters
NOISE = 1e-3


@pytest.fixture(scope="module")
def engine(gsv_clone_voice: Path) -> Iterator[GptSovitsEngine]:
    with open_engine(Bundle.load(gsv_clone_voice / "bundle"), "cpu", warmup=False) as (
        e,
        _,
    ):
        assert isinstance(e, GptSovitsEngine)
        yield e


@pytest.fixture(scope="module")
def modules(gsv_clone_voice: Path) -> tuple[Any, Any]:
    """The test voice's ERes2NetV2 and SoVITS models, in torch."""
    from scripts.gptsovits.models.checkpoints import load_sovits_checkpoint
    from scripts.gptsovits.models.eres2net import load_sv_checkpoint
    from scripts.gptsovits.models.sovits import SovitsModel
    from scripts.gptsovits.synthetic.build import SV_FILE

    src = gsv_clone_voice / "source"
    (pth,) = (src / "SoVITS_weights_v2Pro").glob("*.pth")
    sovits = SovitsModel.from_checkpoint(load_sovits_checkpoint(pth))
    return load_sv_checkpoint(src / SV_FILE).eval(), sovits


def say(e: GptSovitsEngine, text: str, seed: int, vp: VoicePrint | None = None):
    opts = SynthesisOptions(seed=seed, voice_print=vp)
    return np.concatenate([c.audio for c in e.synthesize(text, opts)])


@pytest.fixture(scope="module")
def clips(engine: GptSovitsEngine) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """(main, aux) clips by rate: what the voice said, and at 44.1 kHz."""
    from daemon.sdk.audio.resample import resample

    n = round(CLIP_SECONDS * RATE)
    spoken = [say(engine, SPOKEN, seed)[:n].astype(np.float32) for seed in (3, 4)]
    rng = np.random.default_rng(0)
    cd = [resample(c, RATE, CD_RATE) for c in spoken]
    cd = [(c + NOISE * rng.standard_normal(c.size)).astype(np.float32) for c in cd]
    return {RATE: (spoken[0], spoken[1]), CD_RATE: (cd[0], cd[1])}


def upstream_copies(clip: np.ndarray, rate: int) -> tuple[np.ndarray, np.ndarray]:
    """(peak-limited 32 kHz, its 16 kHz copy) as _get_ref_spec makes them."""
    audio = torch.from_numpy(oracle(clip, rate, RATE).copy())
    maxx = audio.abs().max()
    if maxx > 1:
        audio /= min(2, maxx)
    return audio.numpy(), oracle(audio.numpy(), RATE, 16000)


@torch.no_grad()
def upstream_style(clip: np.ndarray, rate: int, modules: tuple[Any, Any]):
    """(32 kHz copy, 16 kHz copy, sv embedding, (ge, ge512)) of upstream's
    chain on one clip."""
    sv, sovits = modules
    s32, s16 = upstream_copies(clip, rate)
    emb = sv(torch.from_numpy(kaldi_fbank(s16))[None])
    spec = torch.from_numpy(linear_spectrogram(s32))[None]
    ge, ge512 = sovits.global_embedding(spec, emb)
    return s32, s16, emb.numpy(), (ge.numpy(), ge512.numpy())


@pytest.fixture(scope="module")
def upstream(clips, modules) -> dict[int, list[tuple]]:
    """upstream_style of the (main, aux) clips, by rate."""
    return {r: [upstream_style(c, r, modules) for c in cs] for r, cs in clips.items()}


@pytest.mark.parametrize("rate", [RATE, CD_RATE])
def test_the_copies_and_the_sv_embedding_are_upstreams(engine, clips, upstream, rate):
    style = engine.loaded.cloner.style
    for clip, (want32, want16, want_emb, _) in zip(clips[rate], upstream[rate]):
        got32 = spec_copy(clip, rate)
        got16 = sv_copy(got32)
        assert got32.shape == want32.shape and got16.shape == want16.shape
        assert snr_db(want32, got32) >= MIN_COPY_DB
        assert snr_db(want16, got16) >= MIN_COPY_DB
        assert snr_db(want_emb, style.embedding(got16)) >= MIN_STYLE_DB


@pytest.mark.parametrize("rate", [RATE, CD_RATE])
def test_a_cloned_voice_speaks_as_upstreams_chain(engine, clips, upstream, rate):
    main, aux = clips[rate]
    styles = [u[3] for u in upstream[rate]]
    alone = engine.clone(main, rate, TRANSCRIPT)
    assert snr_db(styles[0][0], alone.arrays["ge"]) >= MIN_STYLE_DB
    vp = engine.clone(main, rate, TRANSCRIPT, aux=[(aux, rate)])
    ge, ge512 = mean_style(styles)
    assert snr_db(ge, vp.arrays["ge"]) >= MIN_STYLE_DB
    assert snr_db(ge512, vp.arrays["ge512"]) >= MIN_STYLE_DB
    theirs = VoicePrint(
        vp.engine_id, vp.model, {**vp.arrays, "ge": ge, "ge512": ge512}, vp.meta
    )
    want, got = say(engine, TEXT, 7, theirs), say(engine, TEXT, 7, vp)
    assert got.shape == want.shape and snr_db(want, got) >= MIN_AUDIO_DB
