"""CPU-side tables and reference voices of a ``gpt-sovits-v2pro`` bundle.

Everything the host loop computes itself (embeddings, positions, the T2S predict
layer on the prefill's last row, the VITS phone embedding and semantic codebook)
comes from ``cpu/*.npy``; every shape is checked against ``GsvParams`` at load,
so a mismatched bundle fails before the first request, naming the file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.layout import GsvParams
from daemon.engines.gptsovits.t2s import T2STables
from daemon.sdk.bundles.manifest import Bundle, BundleError

log = logging.getLogger(__name__)


def _load(bundle: Bundle, rel: str, shape: tuple[int | None, ...]) -> np.ndarray:
    path = bundle.path(rel)
    if not path.is_file():
        raise BundleError(f"{bundle.root}: missing {rel}")
    arr = np.load(path, allow_pickle=False)
    if arr.ndim != len(shape) or any(
        want is not None and have != want
        for have, want in zip(arr.shape, shape, strict=True)
    ):
        raise BundleError(f"{bundle.root}: {rel} has shape {arr.shape}, want {shape}")
    return np.ascontiguousarray(arr, np.float32)


@dataclass(frozen=True)
class CpuTables(T2STables):
    """Every CPU-side table of a bundle: the T2S ones, then the VITS ones."""

    vits_text_emb: np.ndarray  # [phone_vocab, vits_hidden]
    codebook: np.ndarray  # [codes, ssl_dim]

    @classmethod
    def load(cls, bundle: Bundle, p: GsvParams) -> CpuTables:
        w = p.width
        alpha = _load(bundle, L.T2S_POS_ALPHA, (2,))
        pe = _load(bundle, L.T2S_PE, (None, w))
        # Upstream computes x + alpha * pe[pos]; alpha * pe is the same float32
        # product whether taken per step or once here.
        return cls(
            text_emb=_load(bundle, L.T2S_TEXT_EMB, (p.phone_vocab, w)),
            bert_w=_load(bundle, L.T2S_BERT_PROJ_W, (w, p.bert_dim)),
            bert_b=_load(bundle, L.T2S_BERT_PROJ_B, (w,)),
            audio_emb=_load(bundle, L.T2S_AUDIO_EMB, (p.vocab, w)),
            text_pe=alpha[0] * pe,
            audio_pe=alpha[1] * pe,
            predict=_load(bundle, L.T2S_PREDICT, (p.vocab, w)),
            vits_text_emb=_load(
                bundle, L.VITS_TEXT_EMB, (p.phone_vocab, p.vits_hidden)
            ),
            codebook=_load(bundle, L.VITS_CODEBOOK, (p.eos, p.ssl_dim)),
        )

    @property
    def positions(self) -> int:
        return self.text_pe.shape[0]


@dataclass(frozen=True)
class Reference:
    """Precomputed features of one reference voice (``refs/<voice>.npz``)."""

    name: str
    phones: np.ndarray  # int64 [n_ref_phones]
    bert: np.ndarray  # float32 [n_ref_phones, bert_dim]
    prompt: np.ndarray  # int64 [n_prompt] semantic tokens
    ge: np.ndarray  # float32 [1, gin, 1]
    ge512: np.ndarray  # float32 [1, mrte, 1]
    text: str
    lang: str

    @classmethod
    def load(cls, path: Path, p: GsvParams, name: str | None = None) -> Reference:
        name = name or path.stem
        try:
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise BundleError(f"{path}: unreadable reference archive: {exc}") from exc
        return cls.from_arrays(data, p, name, str(path))

    @classmethod
    def from_arrays(
        cls, data: Mapping[str, Any], p: GsvParams, name: str, where: str
    ) -> Reference:
        """A reference from its arrays (a ``refs/*.npz`` or a cloned voice's
        print), every shape and range checked (BundleError naming ``where``)."""
        keys = (L.REF_PHONES, L.REF_BERT, L.REF_PROMPT, L.REF_GE, L.REF_GE512)
        missing = [k for k in keys if k not in data]
        if missing:
            raise BundleError(f"{where}: missing {missing}")
        phones = np.asarray(data[L.REF_PHONES], np.int64).reshape(-1)
        bert = np.asarray(data[L.REF_BERT], np.float32)
        prompt = np.asarray(data[L.REF_PROMPT], np.int64).reshape(-1)
        if bert.shape != (len(phones), p.bert_dim):
            raise BundleError(
                f"{where}: bert {bert.shape} != ({len(phones)}, {p.bert_dim})"
            )
        if phones.size and (phones.min() < 0 or phones.max() >= p.phone_vocab):
            raise BundleError(f"{where}: phone ids outside [0, {p.phone_vocab})")
        if prompt.size and (prompt.min() < 0 or prompt.max() >= p.eos):
            raise BundleError(f"{where}: prompt tokens outside [0, {p.eos})")
        if len(phones) + len(prompt) >= p.prefill_len:
            raise BundleError(
                f"{where}: {len(phones)} phones + {len(prompt)} prompt tokens leave "
                f"no room in the {p.prefill_len}-position prefill"
            )
        ge = np.asarray(data[L.REF_GE], np.float32).reshape(1, -1, 1)
        ge512 = np.asarray(data[L.REF_GE512], np.float32).reshape(1, -1, 1)
        if ge.shape[1] != p.gin:
            raise BundleError(f"{where}: ge has {ge.shape[1]} channels, want {p.gin}")
        return cls(
            name=name,
            phones=phones,
            bert=bert,
            prompt=prompt,
            ge=np.ascontiguousarray(ge),
            ge512=np.ascontiguousarray(ge512),
            text=str(data.get(L.REF_TEXT, "")),
            lang=str(data.get(L.REF_LANG, "")),
        )


def load_references(bundle: Bundle, p: GsvParams) -> dict[str, Reference]:
    """The manifest's voices (``voices.<v>.file``, default ``refs/<v>.npz``), or
    every ``refs/*.npz`` when it lists none; at least one is required."""
    if bundle.voices:
        files = {
            name: str(entry.get("file") or L.ref_file(name))
            for name, entry in bundle.voices.items()
        }
    else:
        root = bundle.path(L.REFS_DIR)
        paths = sorted(root.glob("*.npz")) if root.is_dir() else []
        files = {path.stem: L.ref_file(path.stem) for path in paths}
    if not files:
        raise BundleError(f"{bundle.root}: no reference voice under {L.REFS_DIR}/")
    refs = {}
    for name, rel in files.items():
        path = bundle.path(rel)
        if not path.is_file():
            raise BundleError(f"{bundle.root}: voice {name!r}: missing {rel}")
        refs[name] = Reference.load(path, p, name)
        entry = (bundle.voices or {}).get(name) or {}
        if entry.get(L.REF_PROMPT_SEMANTIC, L.PROMPT_APPROXIMATE) != L.PROMPT_HUBERT:
            # Bundles built without --hubert (and all older ones).
            log.warning(
                "%s: voice %r: prompt semantic tokens are approximate (training "
                "tokens + 15 mute tokens, not upstream's HuBERT run on the "
                "reference); rebuild with scripts/build-gptsovits --hubert DIR "
                "for the exact ones",
                bundle.root,
                name,
            )
    return refs
