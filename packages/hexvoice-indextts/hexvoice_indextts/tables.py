"""The CPU side's tables of a bundle, in one ``.npz`` read with NumPy alone
(no torch where the engine runs): the GPT's embedding tables and special ids,
the semantic codebook, the DiT's time frequencies and reflection reach,
BigVGAN's config and the windows' overlap; and ``segment_graphs``, which puts
them together with the graphs (by their names) into what ``Segment`` runs."""

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
    from daemon.sdk.graphs import Runner

    from hexvoice_indextts.segment import SegmentGraphs

#: what a bundle calls the file
TABLES_FILE: Final = "cpu/tables.npz"
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

    def save(self, path: Path) -> None:
        arrays = {f"gpt.{f.name}": getattr(self.gpt, f.name) for f in fields(GptTables)}
        arrays = {k: v for k, v in arrays.items() if isinstance(v, np.ndarray)}
        arrays |= {f"codebook.{f.name}": getattr(self.codebook, f.name)
                   for f in fields(Codebook)}  # fmt: skip
        meta = {k: getattr(self.gpt, k) for k in _GPT_IDS}
        meta |= {"reflect_pad": self.reflect_pad, "vocoder": dict(self.vocoder)}
        meta |= {k: getattr(self, k) for k in ("overlap", "beams", "layers", "heads")}
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
        Vocoder.from_config(_by_size(graphs, "bigvgan_W"), t.vocoder, t.overlap),
    )
