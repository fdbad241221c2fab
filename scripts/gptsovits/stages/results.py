"""The stages' typed results (stored in the work dir's state.json and handed
back as these types on a resumed run).  Here, apart from the stages' work, so
a stage that reads a result imports only its type, not the code making it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from daemon.engines.gptsovits import layout


@dataclass(frozen=True)
class TextGraphs:
    """``export_text``: the g2pW head's phoneme labels."""

    g2pw_labels: int


@dataclass(frozen=True)
class ReferenceGraphs:
    """``export_reference``: what the graphs were made for, the sv embedding's
    width and the hubert window (16 kHz samples)."""

    sv_dim: int
    window: int


@dataclass(frozen=True)
class Tables:
    """``tables``: the manifest's ``params`` (the bundle stage writes them)."""

    params: layout.GsvParams


@dataclass(frozen=True)
class Reference:
    """``refs``: the voice's reference as built (the manifest's voice entry,
    and what was measured on the way)."""

    clip: str
    text: str
    lang: str
    prompt_semantic: str
    ref_seconds: float
    phones: int
    prompt: int
    #: the runtime BERT features vs the training folder's 3-bert/ (None: the
    #: phones differ, or no zh text)
    training_bert_rel_err: float | None
    aux_refs: int = 0
    aux_ge512_rel_err: float | None = None


@dataclass(frozen=True)
class Bundled:
    """``bundle``: where the bundle went."""

    bundle: Path
    tar: Path
    #: files the manifest lists (a graph counts twice: its binary and ONNX)
    files: int
