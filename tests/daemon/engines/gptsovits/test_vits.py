"""vits_enc with padding masks and windowed vits_gen against the torch modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.engine import GptSovitsEngine
from daemon.engines.gptsovits.t2s import CapacityError
from daemon.engines.gptsovits.vits import Vits
from daemon.sdk.audio.windows import windows
from scripts.common.parity import snr_db


def _segment(engine: GptSovitsEngine, n_tokens: int):
    s = engine.loaded
    phones = s.text.phonemize("今天天气很好。").phone_ids
    tokens = np.random.default_rng(5).integers(0, 1024, n_tokens)
    return s.voices[engine.default_voice], phones, tokens


@torch.no_grad()
def test_padded_encoder_equals_the_module_at_exact_length(
    cpu_engine: GptSovitsEngine, sovits_model
):
    from scripts.gptsovits.models.sovits import VitsEnc

    vits = cpu_engine.loaded.vits
    ref, phones, tokens = _segment(cpu_engine, 23)
    z = vits.encode(tokens, phones, ref, np.random.default_rng(9))
    frames = 2 * len(tokens)
    assert z.shape == (vits.inter, frames) and frames < vits.p.vits_frames
    noise = np.random.default_rng(9).standard_normal(
        (vits.inter, frames), dtype=np.float32
    )
    want = VitsEnc(sovits_model)(
        sovits_model.latent(torch.from_numpy(tokens)),
        torch.ones(1, 1, frames),
        sovits_model.phone_embedding(torch.from_numpy(phones)),
        torch.ones(1, 1, len(phones)),
        torch.from_numpy(ref.ge512),
        torch.from_numpy(ref.ge),
        torch.from_numpy(noise[None] * np.float32(vits.p.noise_scale)),
    )[0].numpy()
    assert np.abs(z - want).max() / np.abs(want).max() < 1e-4


@torch.no_grad()
@pytest.mark.parametrize("n_tokens", [7, 64])
def test_windowed_audio_equals_a_full_decode(
    cpu_engine: GptSovitsEngine, sovits_model, n_tokens: int
):
    """≥ 100 dB on the CPU backend, streamed one chunk per vocoder window."""
    from scripts.gptsovits.models.sovits import VitsGen

    vits = cpu_engine.loaded.vits
    ref, phones, tokens = _segment(cpu_engine, n_tokens)
    z = vits.encode(tokens, phones, ref, np.random.default_rng(2))
    calls = vits.gen.runner.stats.calls
    chunks = []
    for chunk in vits.generate(z, ref):
        chunks.append(chunk)
        # each chunk is out as soon as its window ran, before the next one
        assert vits.gen.runner.stats.calls == calls + len(chunks)
    audio = np.concatenate(chunks)
    full = VitsGen(sovits_model)(
        torch.from_numpy(z[None]),
        torch.from_numpy(ref.ge),
        torch.ones(1, 1, z.shape[1]),
    ).numpy()[0, 0]
    assert audio.shape == full.shape == (z.shape[1] * vits.p.hop,)
    snr = snr_db(full, audio)
    print(f"windowed vs full decode: {snr:.1f} dB over {len(chunks)} windows")
    assert snr >= 100.0
    schedule = windows(z.shape[1], vits.p.gen_window, vits.p.gen_overlap)
    assert len(chunks) == len(list(schedule))


def test_segments_that_do_not_fit_are_refused(cpu_engine: GptSovitsEngine):
    vits = cpu_engine.loaded.vits
    with pytest.raises(CapacityError, match="phones exceed"):
        vits.check_fits(vits.p.vits_phones + 1, 1)
    with pytest.raises(CapacityError, match="tokens exceed"):
        vits.check_fits(1, vits.max_tokens + 1)
    ref = cpu_engine.loaded.voices[cpu_engine.default_voice]
    with pytest.raises(ValueError, match="at least one token"):
        vits.encode(np.zeros(0, np.int64), np.ones(3, np.int64), ref, None)


@torch.no_grad()
@pytest.mark.parametrize("sp", [0.8, 1.25, 0.6, 1.65])
def test_speed_lengths_and_latent_as_upstream(
    cpu_engine: GptSovitsEngine, sovits_model, sp: float
):
    """(int(2N / speed) + 1) x 640 samples, and z equal to upstream's enc_p with
    F.interpolate (the module's upstream path) at the exact lengths."""
    from scripts.gptsovits.models.sovits import VitsEnc

    vits = cpu_engine.loaded.vits
    ref, phones, tokens = _segment(cpu_engine, 23)
    n = len(tokens)
    z = vits.encode(tokens, phones, ref, np.random.default_rng(9), None, sp)
    audio = np.concatenate(list(vits.generate(z, ref)))
    assert z.shape[1] == int(2 * n / sp) + 1
    assert len(audio) == (int(2 * n / sp) + 1) * 640 == z.shape[1] * vits.p.hop
    noise = np.random.default_rng(9).standard_normal(z.shape, dtype=np.float32)
    want = (
        VitsEnc(sovits_model)
        .upstream(
            sovits_model.latent(torch.from_numpy(tokens)),
            sovits_model.phone_embedding(torch.from_numpy(phones)),
            torch.from_numpy(ref.ge512),
            torch.from_numpy(ref.ge),
            torch.from_numpy(noise[None] * np.float32(vits.p.noise_scale)),
            sp,
        )[0]
        .numpy()
    )
    assert np.abs(z - want).max() / np.abs(want).max() < 1e-4


def test_slow_speech_must_fit_the_graph(cpu_engine: GptSovitsEngine):
    vits = cpu_engine.loaded.vits
    fr = vits.p.vits_frames
    n = vits.max_tokens_at(0.6)
    assert int(2 * n / 0.6) + 1 <= fr < int(2 * (n + 1) / 0.6) + 1
    vits.check_fits(1, n, 0.6)
    with pytest.raises(CapacityError, match=f"at speed 0.6 \\({fr} frames\\)"):
        vits.check_fits(1, n + 1, 0.6)
    vits.check_fits(1, vits.max_tokens, 1.25)  # fast speech: fewer frames


def test_a_graph_without_the_stretch_input_speaks_at_speed_one_only(
    cpu_engine: GptSovitsEngine, sovits_model, tmp_path
):
    """A bundle built before speed: its vits_enc takes no stretch/z_mask."""
    from scripts.common.build.onnx_export import export_static
    from scripts.common.build.runners import cpu_runner
    from scripts.gptsovits.models.sovits import VitsEnc

    s = cpu_engine.loaded
    p, d = s.params, sovits_model.dims
    fr, tt = p.vits_frames, p.vits_phones
    args = (
        torch.zeros(1, d.ssl, fr), torch.ones(1, 1, fr),
        torch.zeros(1, d.hidden, tt), torch.ones(1, 1, tt),
        torch.zeros(1, d.mrte, 1), torch.zeros(1, d.gin, 1),
        torch.zeros(1, d.inter, fr),
    )  # fmt: skip
    names = ["ssl", "y_mask", "text", "text_mask", "ge512", "ge", "noise"]
    old_onnx = tmp_path / "old.onnx"
    spec = export_static(VitsEnc(sovits_model), args, names, ["z"], old_onnx)
    graphs = {
        L.VITS_ENC: cpu_runner(spec.path, L.VITS_ENC),
        L.VITS_GEN: s.vits.gen.runner,
    }
    old = Vits(p, s.vits.tables, graphs)
    assert not old.speeds and s.vits.speeds
    ref, phones, tokens = _segment(cpu_engine, 9)
    z_old = old.encode(tokens, phones, ref, np.random.default_rng(1))
    z_new = s.vits.encode(tokens, phones, ref, np.random.default_rng(1))
    assert np.abs(z_old - z_new).max() / np.abs(z_new).max() < 1e-5
    with pytest.raises(ValueError, match="predates speed .* speed 1.0 only"):
        old.encode(tokens, phones, ref, np.random.default_rng(1), None, 0.8)
