"""A voice's conditioning on the port's graphs (exported from the tiny
IndexTTS-2's own files, run on onnxruntime CPU) against upstream's
_get_speaker_conditioning of the same clip (44.1 kHz, 0.83 s: both
resamplers and an odd w2v-BERT frame count)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from scripts.common.build.runners import cpu_runner

from hexvoice_indextts.build.campplus_graph import export_campplus, load_campplus
from hexvoice_indextts.build.length_regulator_graph import (
    export_length_regulator,
    load_length_regulator,
)
from hexvoice_indextts.build.semantic_codec_graph import (
    export_semantic_codec,
    load_semantic_codec,
)
from hexvoice_indextts.build.w2v_bert_graph import export_w2v_bert, load_w2v_bert
from hexvoice_indextts.model_dir import read_model_dir
from hexvoice_indextts.model_dir.hub import (
    CAMPPLUS,
    CAMPPLUS_FILE,
    MASKGCT,
    W2V_BERT,
    snapshot,
)
from hexvoice_indextts.oracle.conditioning import speaker_conditioning
from hexvoice_indextts.voice.prompt_mel import mel_basis, prompt_mel
from hexvoice_indextts.voice.speaker import Conditioning, Speaker, SpeakerGraphs

#: buckets that hold the clip: 41 w2v-BERT rows, 82 fbank frames, 71 mel frames
ROWS, FBANK_FRAMES, MEL_FRAMES = 48, 96, 80
#: measured 4.8e-7 (prompt_condition) to 4.2e-6 (spk_cond_emb) of each
#: array's range, float32 on both sides
TOLERANCE = 2e-5


@pytest.fixture(scope="module")
def both(
    tiny: Any, clip: Path, tmp_path_factory: Any
) -> tuple[Conditioning, dict[str, np.ndarray]]:
    dirs = tiny[0]
    theirs = speaker_conditioning(dirs.model, dirs.hf_home, clip)
    m = read_model_dir(dirs.model)
    hub, out = dirs.hf_home / "hub", tmp_path_factory.mktemp("graphs")
    _, w2v = load_w2v_bert(snapshot(hub, W2V_BERT), m.w2v_stat)
    codec, codebook = load_semantic_codec(
        snapshot(hub, MASKGCT), m.config.semantic_codec
    )
    cam = load_campplus(snapshot(hub, CAMPPLUS) / CAMPPLUS_FILE)
    regulator = load_length_regulator(m.s2mel, m.config.s2mel.length_regulator)

    def run(spec: Any) -> Any:
        return cpu_runner(spec.path)

    graphs = SpeakerGraphs(
        {ROWS: run(export_w2v_bert(w2v, ROWS, out))},
        {ROWS: run(export_semantic_codec(codec, ROWS, 1024, out))},
        {FBANK_FRAMES: run(export_campplus(cam, FBANK_FRAMES, out))},
        {MEL_FRAMES: run(export_length_regulator(regulator, MEL_FRAMES, out))},
    )
    pre = m.config.s2mel.preprocess_params
    speaker = Speaker(graphs, codebook, prompt_mel(pre, mel_basis(pre)))
    audio, rate = sf.read(clip, dtype="float32")  # as librosa.load reads it
    return speaker.condition(audio, rate), theirs


@pytest.mark.parametrize(
    "name", ["spk_cond_emb", "style", "prompt_condition", "ref_mel"]
)
def test_the_voice_is_upstreams(both: Any, name: str) -> None:
    ours, theirs = both
    got, want = getattr(ours, name), theirs[name]
    assert got.shape == want.shape, name
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < TOLERANCE, (name, err)
