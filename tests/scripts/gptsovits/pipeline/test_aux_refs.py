"""build-gptsovits --aux-ref: styles averaged as upstream's list-of-refer decode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from daemon.sdk.audio.fbank import kaldi_fbank
from scripts.common.parity import rel_error, snr_db
from scripts.gptsovits import build
from scripts.gptsovits.export.ref_features import RefFeatures
from scripts.gptsovits.models.eres2net import load_sv_checkpoint
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.pipeline import aux_refs, refs, sources
from scripts.gptsovits.synthetic.voice import SyntheticVoice, clip_name
from tests.daemon.sdk.audio.torchaudio_resample import oracle

CLIPS = 3  # the main reference and two aux ones
#: a file's ge against upstream's torchaudio chain: float32 rounding only
#: (measured 141 dB; with soxr's copies, as before, 41 dB)
MIN_FILE_GE_DB = 120.0


def _upstream_get_ge(logs: Path, clip: str, sovits: SovitsModel) -> torch.Tensor:
    """SynthesizerTrn.decode's get_ge for one training clip (its 7-sv_cn
    embedding, as the main reference's)."""
    audio = refs.read_clip(logs / refs.WAV_DIR / clip)
    sv = torch.load(logs / refs.SV_DIR / f"{clip}.pt", map_location="cpu")
    spec = refs.linear_spectrogram(audio)
    return sovits.global_embedding(spec, torch.as_tensor(sv).reshape(1, -1))[0]


@torch.no_grad()
def _upstream_file_ge(
    path: Path, sovits: SovitsModel, sv: torch.nn.Module
) -> np.ndarray:
    """_get_ref_spec + get_ge of an audio file: torchaudio's Resample to 32
    kHz (its arithmetic in torch), the peak limit, Resample to 16 kHz, fbank,
    ERes2NetV2."""
    pcm, rate = sf.read(str(path), dtype="float32")
    audio = torch.from_numpy(oracle(pcm, rate, 32000).copy())
    maxx = audio.abs().max()
    if maxx > 1:
        audio /= min(2, maxx)
    fbank = kaldi_fbank(oracle(audio.numpy(), 32000, 16000))
    emb = sv(torch.from_numpy(fbank)[None])
    spec = refs.linear_spectrogram(audio.numpy())
    return sovits.global_embedding(spec, emb)[0].numpy()


def _main_ref(ge: np.ndarray, ge512: np.ndarray) -> RefFeatures:
    empty = np.zeros(0, np.int32)
    return RefFeatures(
        "main", "t", "zh", empty, np.zeros((0, 4)), empty, ge, ge512, 3.0, None
    )


@torch.no_grad()
def test_training_clips_average_like_upstreams_decode(
    synthetic_voice: SyntheticVoice, sovits_model: SovitsModel
):
    logs = synthetic_voice.logs_dir
    names = [clip_name(synthetic_voice.exp, i) for i in range(CLIPS)]
    ges = [_upstream_get_ge(logs, n, sovits_model) for n in names]
    # decode(refer=[...]): torch.stack(ges, 0).mean(0), then ge_to512
    want_ge = torch.stack(ges, 0).mean(0)
    want_512 = sovits_model.ge_to512(want_ge.transpose(2, 1)).transpose(2, 1)
    first = ges[0]
    main = _main_ref(
        first[0].numpy(),
        sovits_model.ge_to512(first.transpose(2, 1)).transpose(2, 1)[0].numpy(),
    )
    resolved = sources.resolve_aux_refs(logs, names[1:], None)
    assert [r.clip for r in resolved] == names[1:]
    styles = aux_refs.styles(logs, resolved, sovits_model, None)
    ref, measured = aux_refs.with_aux(main, styles, sovits_model)
    assert rel_error(want_ge[0].numpy(), ref.ge) < 1e-6
    assert rel_error(want_512[0].numpy(), ref.ge512) < 1e-6
    assert measured["aux_refs"] == 2
    assert measured["aux_ge512_rel_err"] < aux_refs.AUX_GE512_MAX_REL_ERR
    assert aux_refs.with_aux(main, [], sovits_model) == (main, {})
    files = sources.aux_ref_files(logs, resolved)
    assert logs / refs.SV_DIR / f"{names[1]}.pt" in files


def test_an_audio_file_needs_sv_and_then_gets_its_embedding(
    synthetic_voice: SyntheticVoice, sovits_model: SovitsModel, tmp_path: Path
):
    from scripts.gptsovits.synthetic.sv import write_tiny_sv

    logs = synthetic_voice.logs_dir
    audio = refs.read_clip(logs / refs.WAV_DIR / clip_name(synthetic_voice.exp, 1))
    clip = tmp_path / "other.wav"
    sf.write(clip, audio[::2], 16000)  # another rate: resampled to 32 kHz
    with pytest.raises(refs.TrainingFolderError, match="add --sv CKPT"):
        sources.resolve_aux_refs(logs, [str(clip)], None)
    sv = write_tiny_sv(tmp_path / "sv.ckpt")
    (ref,) = sources.resolve_aux_refs(logs, [str(clip)], sv)
    assert ref.path == clip and sources.aux_ref_files(logs, [ref]) == [clip]
    ((ge, ge512),) = aux_refs.styles(logs, [ref], sovits_model, sv)
    d = sovits_model.dims
    assert ge.shape == (1, d.gin, 1) and ge512.shape == (1, d.mrte, 1)
    assert np.isfinite(ge).all() and np.abs(ge).max() > 0
    want = _upstream_file_ge(clip, sovits_model, load_sv_checkpoint(sv))
    assert snr_db(want, ge) >= MIN_FILE_GE_DB
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    (bad_ref,) = sources.resolve_aux_refs(logs, [str(bad)], sv)
    with pytest.raises(refs.TrainingFolderError, match="not audio"):
        aux_refs.styles(logs, [bad_ref], sovits_model, sv)


def test_an_unknown_aux_ref_stops_the_build_before_any_step(
    synthetic_voice: SyntheticVoice, tmp_path: Path, capsys
):
    v = synthetic_voice
    argv = [
        str(v.logs_dir),
        "--gpt-epoch",
        str(v.gpt_epoch),
        "--sovits-epoch",
        str(v.sovits_epoch),
        "--ref",
        v.ref_clip,
        "--target",
        "simulator",
        "--out",
        str(tmp_path / "out"),
        "--bert",
        str(v.bert_dir),
        "--g2pw",
        str(v.g2pw_dir),
        "--aux-ref",
        clip_name(v.exp, 1),
        "--aux-ref",
        "nosuch.wav",
    ]
    assert build.main(argv) == 1
    err = capsys.readouterr().err
    assert "--aux-ref nosuch.wav: neither a clip of" in err
    assert not (tmp_path / "out.work").exists()
