"""The training clips ``scripts/eval-gptsovits`` resynthesises, read from logs/<exp>/.

Per clip (files of upstream's dataset preparation, see
scripts/gptsovits/pipeline/refs.py):
its recording (5-wav32k/), its own semantic tokens (6-name2semantic.tsv), its
phones (2-name2text.txt) and its speaker-verification embedding (7-sv_cn/). The
clip is its own reference, as in the reference port's eval_sovits_ckpts.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from daemon.engines.gptsovits.frontend.symbols import phones_to_ids
from scripts.gptsovits.evaluate.metrics import (
    SAMPLE_RATE,
    WHINE_NPERSEG,
    Window,
    breath_windows,
)
from scripts.gptsovits.pipeline.refs import read_clip
from scripts.gptsovits.pipeline.sources import (
    NAME2SEMANTIC,
    NAME2TEXT,
    SV_DIR,
    WAV_DIR,
    TrainingFolderError,
)

SEMANTIC_HEADER = "item_name"  # 3-get-semantic.py's first line
# How many clips load_clips looks at per clip wanted, looking for breaths.
SCAN_FACTOR = 4


@dataclass(frozen=True)
class TrainingClip:
    name: str
    audio: np.ndarray  # float32 [n] at 32 kHz, peak-limited as the reference is
    tokens: np.ndarray  # int64 [n_tokens] 25 Hz semantic codes
    phones: np.ndarray  # int64 [n_phones] symbol ids
    sv: torch.Tensor  # float32 [1, sv]
    breaths: list[Window]  # breath windows of the recording

    @property
    def seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE


def _columns(path: Path, wanted: int, header: str | None = None) -> dict[str, str]:
    """name -> column `wanted` of a tab-separated training-folder table."""
    if not path.is_file():
        raise TrainingFolderError(f"training folder: missing {path}")
    out: dict[str, str] = {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or (i == 1 and header and line.startswith(header)):
            continue
        parts = line.split("\t")
        if len(parts) <= wanted:
            raise TrainingFolderError(
                f"{path}:{i}: expected at least {wanted + 1} tab-separated "
                f"columns, found {len(parts)}"
            )
        out[parts[0]] = parts[wanted]
    return out


def _tokens(text: str, where: str) -> np.ndarray:
    """The codebook's size is the model's: resynth.check_clips checks the top."""
    try:
        tokens = np.array([int(t) for t in text.split()], np.int64)
    except ValueError as exc:
        raise TrainingFolderError(f"{where}: semantic tokens are not integers") from exc
    if not len(tokens) or tokens.min() < 0:
        raise TrainingFolderError(f"{where}: no semantic tokens, or negative ones")
    return tokens


def _sv(path: Path) -> torch.Tensor:
    try:
        sv = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a bad file
        raise TrainingFolderError(f"{path}: unreadable ({exc})") from exc
    return torch.as_tensor(sv, dtype=torch.float32).reshape(1, -1)


def _audio(path: Path) -> np.ndarray:
    try:
        audio = read_clip(path)
    except RuntimeError as exc:  # soundfile's LibsndfileError: not audio
        raise TrainingFolderError(f"{path}: unreadable audio ({exc})") from exc
    if len(audio) < WHINE_NPERSEG:
        raise TrainingFolderError(
            f"{path}: {len(audio)} samples, shorter than the {WHINE_NPERSEG} the "
            "whine spectrum needs"
        )
    return audio


def clip_names(logs: Path) -> list[str]:
    """Clips with a recording, tokens and phones, sorted; the tables must exist."""
    semantic = _columns(logs / NAME2SEMANTIC, 1, SEMANTIC_HEADER)
    texts = _columns(logs / NAME2TEXT, 1)
    wavs = logs / WAV_DIR
    if not wavs.is_dir():
        raise TrainingFolderError(f"training folder: missing {wavs}")
    names = sorted(p.name for p in wavs.iterdir() if p.name in semantic)
    names = [n for n in names if n in texts]
    if not names:
        raise TrainingFolderError(
            f"{logs}: no clip of {WAV_DIR}/ is listed in both {NAME2SEMANTIC} "
            f"and {NAME2TEXT}"
        )
    return names


def _clip(logs: Path, name: str, token_text: str, phone_text: str) -> TrainingClip:
    sv_path = logs / SV_DIR / f"{name}.pt"
    if not sv_path.is_file():
        raise TrainingFolderError(f"training folder: missing {sv_path}")
    phones = phones_to_ids(phone_text.split())
    if not len(phones):
        raise TrainingFolderError(f"{NAME2TEXT}: no phones for {name!r}")
    audio = _audio(logs / WAV_DIR / name)
    return TrainingClip(
        name=name,
        audio=audio,
        tokens=_tokens(token_text, f"{NAME2SEMANTIC} {name}"),
        phones=phones,
        sv=_sv(sv_path),
        breaths=breath_windows(audio),
    )


def load_clips(
    logs: Path,
    limit: int,
    progress: Callable[[str], None] = lambda _: None,
) -> list[TrainingClip]:
    """`limit` clips, breath windows detected, sorted by name.

    Clips with a breath come first, as the reference port picks only those
    (tonality needs breaths): the first `limit` such clips by name, looking at
    no more than SCAN_FACTOR x `limit` clips (pyin costs about a second per
    clip); the rest of `limit` is made up with the first clips without one.
    """
    logs = Path(logs)
    if not logs.is_dir():
        raise TrainingFolderError(f"training folder {logs} does not exist")
    names = clip_names(logs)[: SCAN_FACTOR * limit]
    semantic = _columns(logs / NAME2SEMANTIC, 1, SEMANTIC_HEADER)
    texts = _columns(logs / NAME2TEXT, 1)
    breathing: list[TrainingClip] = []
    others: list[TrainingClip] = []
    for i, name in enumerate(names, 1):
        if len(breathing) == limit:
            break
        clip = _clip(logs, name, semantic[name], texts[name])
        progress(
            f"clip {i}/{len(names)} {name}: {clip.seconds:.1f} s, "
            f"{len(clip.breaths)} breath window(s)"
        )
        if clip.breaths:
            breathing.append(clip)
        elif len(others) < limit:
            others.append(clip)
    chosen = breathing + others[: limit - len(breathing)]
    return sorted(chosen, key=lambda c: c.name)
