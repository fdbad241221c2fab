"""Every per-voice graph of a model directory, exported into one folder (the
build's export stage, and the tests): w2v-BERT 2.0 to layer 17 and the
semantic codec's encoder per feature-row bucket, the GPT's speaker latents
and emotion vector per the same rows, CAM++ per fbank-frame bucket, and the
length regulator per prompt-mel bucket; ``voice_tables`` reads what the CPU
side needs to make a voice (tables.VoiceTables)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import numpy as np
import torch
from scripts.common.build.onnx_export import GraphSpec, export_static

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
from hexvoice_indextts.graphs.gpt_conditioning import (
    INPUTS,
    EmotionVector,
    SpeakerLatents,
    gpt_state,
)
from hexvoice_indextts.layout import VoiceBuckets, emotion_name, latents_name
from hexvoice_indextts.model_dir import W2V_WIDTH, ModelDir
from hexvoice_indextts.model_dir.hub import (
    CAMPPLUS,
    CAMPPLUS_FILE,
    MASKGCT,
    W2V_BERT,
    snapshot,
)
from hexvoice_indextts.tables import VoiceTables
from hexvoice_indextts.voice.prompt_mel import mel_basis

LATENTS_OUTPUT: Final = "latents"
EMOTION_OUTPUT: Final = "emo_vec"


def export_voice(
    md: ModelDir, hub: Path, b: VoiceBuckets, out: Path
) -> dict[str, GraphSpec]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return {spec.name: spec for spec in _exports(md, hub, b, out)}


def _conditioning(port: torch.nn.Module, rows: int, output: str, path: Path):
    args = (torch.zeros(1, rows, W2V_WIDTH), torch.ones(1, rows))
    return export_static(port, args, INPUTS, (output,), path)


def _exports(
    md: ModelDir, hub: Path, b: VoiceBuckets, out: Path
) -> Iterator[GraphSpec]:
    cfg = md.config
    _, w2v = load_w2v_bert(snapshot(hub, W2V_BERT), md.w2v_stat)
    codec, _ = load_semantic_codec(snapshot(hub, MASKGCT), cfg.semantic_codec)
    state = gpt_state(md.gpt)
    latents = SpeakerLatents(state, cfg.gpt).eval()
    emotion = EmotionVector(state, cfg.gpt).eval()
    cam = load_campplus(snapshot(hub, CAMPPLUS) / CAMPPLUS_FILE)
    regulator = load_length_regulator(md.s2mel, cfg.s2mel.length_regulator)
    each: list[tuple[tuple[int, ...], Callable[[int], GraphSpec]]] = [
        (b.rows, lambda n: export_w2v_bert(w2v, n, out)),
        (b.rows, lambda n: export_semantic_codec(codec, n, W2V_WIDTH, out)),
        (b.rows, lambda n: _conditioning(
            latents, n, LATENTS_OUTPUT, out / f"{latents_name(n)}.onnx")),
        (b.rows, lambda n: _conditioning(
            emotion, n, EMOTION_OUTPUT, out / f"{emotion_name(n)}.onnx")),
        (b.fbank, lambda n: export_campplus(cam, n, out)),
        (b.mel, lambda n: export_length_regulator(regulator, n, out)),
    ]  # fmt: skip
    for sizes, export in each:
        for n in sizes:
            yield export(n)


def voice_tables(md: ModelDir) -> VoiceTables:
    cfg = md.config
    pre = cfg.s2mel.preprocess_params
    s = pre.spect_params

    def matrix(name: str) -> np.ndarray:
        return torch.load(md.file(name), map_location="cpu").float().numpy()

    return VoiceTables(
        mel_basis=mel_basis(pre),
        emo_matrix=matrix(cfg.emo_matrix),
        spk_matrix=matrix(cfg.spk_matrix),
        emo_num=tuple(cfg.emo_num),
        preprocess={
            "sr": pre.sr, "n_fft": s.n_fft, "win_length": s.win_length,
            "hop_length": s.hop_length, "n_mels": s.n_mels, "fmin": s.fmin,
            "fmax": s.fmax,
        },
    )  # fmt: skip
