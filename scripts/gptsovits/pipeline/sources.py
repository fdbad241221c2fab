"""Locate a voice's inputs in an upstream GPT-SoVITS installation.

After training, upstream keeps (webui.py, s1_train.py, s2_train.py):

    <root>/logs/<exp>/                         extracted training data (refs.py)
    <root>/GPT_weights_v2Pro/<exp>-e<N>.ckpt    GPT (T2S) epoch N
    <root>/SoVITS_weights_v2Pro/<exp>_e<M>_s<steps>.pth
    <root>/GPT_SoVITS/pretrained_models/chinese-roberta-wwm-ext-large/
    <root>/GPT_SoVITS/text/G2PWModel/

(v2ProPlus uses the ``*_v2ProPlus`` weight folders.) Zero-shot voices also take

    <root>/GPT_SoVITS/pretrained_models/chinese-hubert-base/              --hubert
    <root>/GPT_SoVITS/pretrained_models/sv/pretrained_eres2netv2w24s4ep4.ckpt  --sv

(optional: given, they are checked like the others). Every missing input is
reported by path before any model is loaded.

The training folder holds what upstream's dataset preparation (webui
"1-GPT-SoVITS-TTS / 1A") computed with HuBERT and ERes2Net; refs.py reads it:

    2-name2text.txt      name, phones, word2ph, norm_text (tabs)   1-get-text.py
    3-bert/<name>.pt     BERT features [bert_dim, n_phones], zh    1-get-text.py
    5-wav32k/<name>      the clip, 32 kHz mono                    2-get-hubert-wav32k.py
    6-name2semantic.tsv  name, space-separated semantic tokens     3-get-semantic.py
    7-sv_cn/<name>.pt    speaker-verification embedding [1, sv]    2-get-sv.py

Its files and ``--aux-ref`` (aux_refs.py) are resolved here, before any work;
this module imports no model, so the context every stage reads keys on little
code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

WEIGHT_SUFFIXES = ("v2Pro", "v2ProPlus")
DEFAULT_BERT = "GPT_SoVITS/pretrained_models/chinese-roberta-wwm-ext-large"
DEFAULT_G2PW = "GPT_SoVITS/text/G2PWModel"
BERT_FILES = ("config.json", "vocab.txt")
HUBERT_CONFIG = "config.json"  # a transformers save_pretrained directory
G2PW_FILES = (
    "g2pW.onnx",
    "POLYPHONIC_CHARS.txt",
    "MONOPHONIC_CHARS.txt",
    "bopomofo_to_pinyin_wo_tune_dict.json",
)


#: the training folder's files (upstream's dataset preparation; refs.py)
NAME2TEXT = "2-name2text.txt"
BERT_DIR = "3-bert"
WAV_DIR = "5-wav32k"
NAME2SEMANTIC = "6-name2semantic.tsv"
SV_DIR = "7-sv_cn"


class SourceError(FileNotFoundError):
    """An input of the pipeline is missing; the message names it."""


class TrainingFolderError(ValueError):
    """A training-folder file is missing or malformed (the message names it)."""


def need(path: Path) -> Path:
    """``path``, or TrainingFolderError naming it when it is missing."""
    if not path.exists():
        raise TrainingFolderError(f"training folder: missing {path}")
    return path


def required_files(logs: Path, clip: str) -> list[Path]:
    """The training-folder files a reference needs (3-bert only for zh)."""
    return [
        logs / NAME2TEXT,
        logs / NAME2SEMANTIC,
        logs / WAV_DIR / clip,
        logs / SV_DIR / f"{clip}.pt",
    ]


def resolve_clip(logs: Path, ref: str) -> str:
    """--ref may be a clip name or a path; the clip must be in 5-wav32k/."""
    name = Path(ref).name
    for path in required_files(logs, name):
        need(path)
    return name


@dataclass(frozen=True)
class Sources:
    logs: Path
    exp: str
    gpt_ckpt: Path
    sovits_pth: Path
    bert_dir: Path
    g2pw_dir: Path
    ref_clip: str
    #: chinese-hubert-base (--hubert) and the ERes2NetV2 checkpoint (--sv)
    hubert_dir: Path | None = None
    sv_ckpt: Path | None = None


def _one(candidates: list[Path], what: str, searched: list[str]) -> Path:
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise SourceError(f"no {what}; searched {', '.join(searched)}")
    raise SourceError(f"several {what}: {', '.join(map(str, candidates))}")


@dataclass(frozen=True)
class SourceOptions:
    """The build's options that name its inputs (the CLI's flags);
    find_sources resolves them to files."""

    #: the training folder, <root>/logs/<exp>
    logs: Path
    #: the epochs of the GPT and SoVITS checkpoints (--gpt-epoch, --sovits-epoch)
    gpt_epoch: int
    sovits_epoch: int
    #: the reference clip (--ref): a name in 5-wav32k/ or a path to one there
    ref: str
    #: chinese-roberta-wwm-ext-large and G2PWModel dirs (default: under <root>)
    bert: Path | None = None
    g2pw: Path | None = None
    #: chinese-hubert-base dir and ERes2NetV2 checkpoint (both: zero-shot graphs)
    hubert: Path | None = None
    sv: Path | None = None


def find_sources(opts: SourceOptions) -> Sources:
    gpt_epoch, sovits_epoch = opts.gpt_epoch, opts.sovits_epoch
    bert, g2pw, hubert, sv = opts.bert, opts.g2pw, opts.hubert, opts.sv
    logs = Path(opts.logs)
    if not logs.is_dir():
        raise SourceError(f"training folder {logs} does not exist")
    exp, root = logs.name, logs.parent.parent
    gpt_globs = [f"GPT_weights_{s}/{exp}-e{gpt_epoch}.ckpt" for s in WEIGHT_SUFFIXES]
    sovits_globs = [
        f"SoVITS_weights_{s}/{exp}_e{sovits_epoch}_s*.pth" for s in WEIGHT_SUFFIXES
    ]
    gpt = _one(
        [p for g in gpt_globs for p in sorted(root.glob(g))],
        f"GPT checkpoint for epoch {gpt_epoch}",
        [str(root / g) for g in gpt_globs],
    )
    sovits = _one(
        [p for g in sovits_globs for p in sorted(root.glob(g))],
        f"SoVITS checkpoint for epoch {sovits_epoch}",
        [str(root / g) for g in sovits_globs],
    )
    bert_dir = Path(bert) if bert else root / DEFAULT_BERT
    g2pw_dir = Path(g2pw) if g2pw else root / DEFAULT_G2PW
    for directory, files, flag in (
        (bert_dir, BERT_FILES, "--bert"),
        (g2pw_dir, G2PW_FILES, "--g2pw"),
    ):
        for name in files:
            if not (directory / name).is_file():
                raise SourceError(f"{flag} {directory}: missing {name}")
    if sv is not None and hubert is None:
        raise SourceError("--sv makes the zero-shot graphs, which also need --hubert")
    if hubert is not None and not (Path(hubert) / HUBERT_CONFIG).is_file():
        raise SourceError(f"--hubert {hubert}: missing {HUBERT_CONFIG}")
    if sv is not None and not Path(sv).is_file():
        raise SourceError(f"--sv {sv}: no such file (the ERes2NetV2 .ckpt)")
    try:
        clip = resolve_clip(logs, opts.ref)
    except TrainingFolderError as exc:
        raise SourceError(str(exc)) from exc
    return Sources(
        logs,
        exp,
        gpt,
        sovits,
        bert_dir,
        g2pw_dir,
        clip,
        Path(hubert) if hubert else None,
        Path(sv) if sv else None,
    )


@dataclass(frozen=True)
class AuxRef:
    """One ``--aux-ref``: a training-folder clip (``clip``) or a file (``path``)."""

    arg: str
    clip: str | None = None
    path: Path | None = None


def resolve_aux_refs(
    logs: Path, args: Sequence[str], sv_ckpt: Path | None
) -> tuple[AuxRef, ...]:
    """Each ``--aux-ref`` as a clip of the training folder or an audio file;
    TrainingFolderError naming the argument when it is neither, or when a file
    needs ``--sv`` for its speaker embedding."""
    refs = []
    for arg in args:
        try:
            refs.append(AuxRef(arg, clip=resolve_clip(logs, arg)))
            continue
        except TrainingFolderError:
            pass
        path = Path(arg)
        if not path.is_file():
            raise TrainingFolderError(
                f"--aux-ref {arg}: neither a clip of {logs / WAV_DIR} (with "
                f"{SV_DIR}/) nor an audio file"
            )
        if sv_ckpt is None:
            raise TrainingFolderError(
                f"--aux-ref {arg}: not a training-folder clip, so its speaker "
                "embedding needs the ERes2NetV2 checkpoint: add --sv CKPT"
            )
        refs.append(AuxRef(arg, path=path))
    return tuple(refs)


def aux_ref_files(logs: Path, refs: Sequence[AuxRef]) -> list[Path]:
    """The files the refs stage reads for them (part of its key)."""
    out: list[Path] = []
    for ref in refs:
        if ref.clip is not None:
            out += required_files(logs, ref.clip)
        elif ref.path is not None:
            out.append(ref.path)
    return out
