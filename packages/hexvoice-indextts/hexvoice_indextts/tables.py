"""The CPU side's tables of a bundle, each in one ``.npz`` read with NumPy
alone (no torch where the engine runs):

- ``UtteranceTables``: the GPT's embedding tables and special ids, the
  semantic codebook, the DiT's time frequencies and reflection reach,
  BigVGAN's config and the windows' overlap;
- ``VoiceTables``: the prompt mel's filters and parameters, the emotion
  matrices and their row counts.

``segment_graphs`` and ``voice_maker`` put them together with the graphs (by
their names) into what ``Segment`` and ``VoiceMaker`` run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from hexvoice_indextts.gpt.generate import GptShape, gpt_stack
from hexvoice_indextts.gpt.prompt import GptTables
from hexvoice_indextts.s2mel.mel import MelGraphs
from hexvoice_indextts.vocoder.windows import Vocoder
from hexvoice_indextts.voice.semantic_codes import Codebook

if TYPE_CHECKING:
    from hexvoice_indextts.voice.maker import VoiceMaker

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner

    from hexvoice_indextts.segment import SegmentGraphs

#: what a bundle calls the files
TABLES_FILE: Final = "cpu/tables.npz"
VOICE_TABLES_FILE: Final = "cpu/voice_tables.npz"
_GPT_IDS: Final = ("start_text", "stop_text", "start_mel", "stop_mel")


@dataclass(frozen=True)
class UtteranceTables:
    gpt: GptTables
    codebook: Codebook
    dit_freqs: np.ndarray
    reflect_pad: int
    vocoder: Mapping[str, Any]  # BigVGAN's config.json
    overlap: int
    beams: int
    layers: int
    heads: int
    #: BigVGAN's receptive radius in frames (the overlap must cover it)
    vocoder_radius: float

    def save(self, path: Path) -> None:
        arrays = {f"gpt.{f.name}": getattr(self.gpt, f.name) for f in fields(GptTables)}
        arrays = {k: v for k, v in arrays.items() if isinstance(v, np.ndarray)}
        arrays |= {f"codebook.{f.name}": getattr(self.codebook, f.name)
                   for f in fields(Codebook)}  # fmt: skip
        meta = {k: getattr(self.gpt, k) for k in _GPT_IDS}
        meta |= {"reflect_pad": self.reflect_pad, "vocoder": dict(self.vocoder)}
        keys = ("overlap", "beams", "layers", "heads", "vocoder_radius")
        meta |= {k: getattr(self, k) for k in keys}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            np.savez(f, dit_freqs=self.dit_freqs, meta=json.dumps(meta), **arrays)

    @classmethod
    def load(cls, path: Path) -> UtteranceTables:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            part = {k: z[k] for k in z.files}

        def pick(prefix: str) -> dict[str, np.ndarray]:
            n = len(prefix)
            return {k[n:]: v for k, v in part.items() if k.startswith(prefix)}

        gpt = GptTables(**pick("gpt."), **{k: int(meta[k]) for k in _GPT_IDS})
        return cls(
            gpt, Codebook(**pick("codebook.")), part["dit_freqs"],
            int(meta["reflect_pad"]), meta["vocoder"], int(meta["overlap"]),
            int(meta["beams"]), int(meta["layers"]), int(meta["heads"]),
            float(meta["vocoder_radius"]),
        )  # fmt: skip


def _by_size(graphs: Mapping[str, Runner], prefix: str) -> dict[int, Runner]:
    """The graphs named ``<prefix><size>``, by size."""
    return {
        int(name[len(prefix) :]): g
        for name, g in graphs.items()
        if name.startswith(prefix) and name[len(prefix) :].isdigit()
    }


def segment_graphs(graphs: Mapping[str, Runner], t: UtteranceTables) -> SegmentGraphs:
    """What Segment runs, from the graphs by name (the bundle's) and the tables."""
    from hexvoice_indextts.segment import SegmentGraphs

    vocab = len(t.gpt.mel)  # number_mel_codes: the logits' width
    shape = GptShape(t.layers, t.heads, t.gpt.width, vocab, t.beams)
    prefill = sorted(_by_size(graphs, "gpt_prefill_P"))
    decode = sorted(_by_size(graphs, "gpt_decode_L"))
    mel = MelGraphs(
        _by_size(graphs, "length_regulator_F"),
        _by_size(graphs, "dit_F"),
        t.dit_freqs,
        t.reflect_pad,
    )
    return SegmentGraphs(
        gpt_stack(graphs, shape, prefill, decode),
        _by_size(graphs, "gpt_latent_P"),
        t.gpt,
        t.codebook,
        mel,
        Vocoder.from_config(
            _by_size(graphs, "bigvgan_W"), t.vocoder, t.overlap, t.vocoder_radius
        ),
    )


@dataclass(frozen=True)
class VoiceTables:
    mel_basis: np.ndarray  # [n_mels, n_fft / 2 + 1]
    emo_matrix: np.ndarray  # feat2.pt
    spk_matrix: np.ndarray  # feat1.pt
    emo_num: tuple[int, ...]
    preprocess: Mapping[str, Any]  # s2mel.preprocess_params, flattened

    def save(self, path: Path) -> None:
        meta = {"emo_num": list(self.emo_num), "preprocess": dict(self.preprocess)}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            np.savez(
                f, mel_basis=self.mel_basis, emo_matrix=self.emo_matrix,
                spk_matrix=self.spk_matrix, meta=json.dumps(meta),
            )  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> VoiceTables:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            return cls(
                z["mel_basis"], z["emo_matrix"], z["spk_matrix"],
                tuple(meta["emo_num"]), meta["preprocess"],
            )  # fmt: skip


def voice_maker(
    graphs: Mapping[str, Runner], codebook: Codebook, t: VoiceTables
) -> VoiceMaker:
    """What makes a voice of a clip, from the graphs by name and the tables."""
    from hexvoice_indextts.model_dir.config import Preprocess, SpectParams
    from hexvoice_indextts.voice.maker import VoiceMaker
    from hexvoice_indextts.voice.prompt_mel import prompt_mel
    from hexvoice_indextts.voice.speaker import Speaker, SpeakerGraphs

    p = dict(t.preprocess)
    pre = Preprocess(p.pop("sr"), SpectParams(**p))
    speaker = Speaker(
        SpeakerGraphs(
            _by_size(graphs, "w2v_bert_R"), _by_size(graphs, "semantic_codec_R"),
            _by_size(graphs, "campplus_F"), _by_size(graphs, "length_regulator_F"),
        ),
        codebook,
        prompt_mel(pre, t.mel_basis),
    )  # fmt: skip
    return VoiceMaker(
        speaker, _by_size(graphs, "speaker_latents_R"),
        _by_size(graphs, "emotion_vector_R"),
    )  # fmt: skip
