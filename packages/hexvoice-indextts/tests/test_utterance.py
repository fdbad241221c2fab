"""A four-segment text, from its characters to int16 audio on hexvoice's
graphs (onnxruntime CPU), against upstream's own ``infer`` of the same text
in the same voice under the same seed (conftest ``runs.multi``): the text
front end's segments, each segment's codes and audio, and upstream's 200 ms
of silence between segments give upstream's int16 samples (90 dB or better
over the whole clip, and equal in length)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from scripts.common.parity import snr_db

from hexvoice_indextts.gpt.generate import Sampling
from hexvoice_indextts.model_dir import read_model_dir
from hexvoice_indextts.oracle.draws import TorchDraws
from hexvoice_indextts.oracle.run import SEGMENT_PIECES, TINY_MEL_TOKENS
from hexvoice_indextts.oracle.run import TEXT as ORACLE_TEXT
from hexvoice_indextts.segment import Segment, VoiceRows
from hexvoice_indextts.text.normalize import Normalizer
from hexvoice_indextts.text.tokens import Tokenizer
from hexvoice_indextts.utterance import Utterance, silence_samples

front = pytest.importorskip("indextts.utils.front")

AUDIO_DB = 90.0
SEED = 0


@pytest.fixture(scope="module")
def utterance(tiny: Any, cpu_graphs: Any, runs: Any) -> Utterance:
    md = read_model_dir(tiny[0].model)
    # the oracle's language="en", NeMo's grammars from upstream's cache
    cache = Path(front.__file__).parent / "nemo_cache"
    tokenizer = Tokenizer(md.bpe, Normalizer(cache, "en"))
    segment = Segment(cpu_graphs, Sampling(max_mel_tokens=TINY_MEL_TOKENS))
    return Utterance(tokenizer, segment, runs.multi_pieces)


def test_a_text_of_segments_is_upstreams_audio(utterance: Utterance, runs: Any) -> None:
    t = runs.trace  # the same clip's voice rows (upstream's, traced)
    voice = VoiceRows(
        t["spk_latent"][0], t["emovec"][0], t["style"][0], t["prompt_condition"][0],
        t["ref_mel"][0],
    )  # fmt: skip
    segments = utterance.segments(runs.multi_text)
    assert len(segments) == 4
    torch.manual_seed(SEED)
    pieces = list(utterance.speak(segments, voice, TorchDraws()))
    ends = [p.segment for p in pieces if p.end_of_segment]
    assert ends == [0, 1, 2, 3]
    gaps = [p for p in pieces if p.end_of_segment][:-1]
    assert all(
        len(g.pcm) == silence_samples() == 4410 and not g.pcm.any() for g in gaps
    )
    pcm, wav = np.concatenate([p.pcm for p in pieces]), runs.multi.reshape(-1)
    assert pcm.dtype == np.int16 and pcm.shape == wav.shape
    db = snr_db(wav, pcm)
    print(f"four segments from upstream's voice rows: {db:.1f} dB")
    assert db >= AUDIO_DB, db


def test_nothing_to_say_is_a_clear_error(utterance: Utterance) -> None:
    for text in ("", "   "):
        with pytest.raises(ValueError, match="nothing to say"):
            utterance.segments(text)


@pytest.fixture(scope="module")
def voice(cpu_model: Any, clip: Path) -> Any:
    import soundfile as sf

    audio, rate = sf.read(clip, dtype="float32")  # as librosa.load reads it
    return cpu_model.voices.make(audio, rate)


def test_the_clips_voice_is_upstreams(voice: Any, cpu_model: Any, runs: Any) -> None:
    """The voice made of the clip on the per-voice graphs: upstream's speaker
    latents, emotion vector, style, prompt condition and mel (2e-5 of each
    array's range, as the speaker conditioning's own test)."""
    from hexvoice_indextts.voice.maker import emotion_for

    t = runs.trace
    got = {
        "spk_latent": voice.latents, "emovec": emotion_for(voice, cpu_model.matrices),
        "style": voice.style, "prompt_condition": voice.prompt_condition,
        "ref_mel": voice.ref_mel,
    }  # fmt: skip
    for name, value in got.items():
        want = t[name][0]
        assert value.shape == want.shape, name
        err = np.abs(value - want).max() / np.abs(want).max()
        assert err < 2e-5, (name, err)


@pytest.mark.parametrize("which", ["first", "multi"])
def test_from_the_clip_to_upstreams_audio(
    utterance: Utterance, voice: Any, cpu_model: Any, runs: Any, which: str
) -> None:
    """Nothing of upstream's run but its seed: the clip's voice and the text,
    one segment and four, give upstream's int16 audio."""
    from hexvoice_indextts.voice.maker import emotion_for

    text = runs.multi_text if which == "multi" else ORACLE_TEXT
    rows = voice.rows(emotion_for(voice, cpu_model.matrices))
    limit = runs.multi_pieces if which == "multi" else SEGMENT_PIECES
    speaker = Utterance(utterance.tokenizer, utterance.segment, limit)
    torch.manual_seed(SEED)
    pcm = np.concatenate(
        [p.pcm for p in speaker.speak(speaker.segments(text), rows, TorchDraws())]
    )
    wav = getattr(runs, which).reshape(-1)
    assert pcm.shape == wav.shape
    db = snr_db(wav, pcm)
    print(f"from the clip, {which}: {db:.1f} dB over {len(wav)} samples")
    assert db >= AUDIO_DB, db
