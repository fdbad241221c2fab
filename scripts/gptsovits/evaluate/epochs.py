"""Every SoVITS epoch saved for an experiment, and loading one on CPU torch.

Upstream's s2_train.py saves epoch M of experiment <exp> as
``<root>/SoVITS_weights_v2Pro/<exp>_e<M>_s<steps>.pth`` (``*_v2ProPlus`` for
v2ProPlus), where logs/<exp>/ is the training folder under the same <root>
(scripts/gptsovits/pipeline/sources.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.gptsovits.models.checkpoints import CheckpointError, load_sovits_checkpoint
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.pipeline.sources import WEIGHT_SUFFIXES


class EpochError(ValueError):
    """No epoch to evaluate, or one that cannot be loaded (the message says which)."""


@dataclass(frozen=True)
class Epoch:
    epoch: int
    steps: int
    path: Path
    label: str  # "e8"; "e8_s120" when two files share an epoch


def weight_dirs(logs: Path) -> list[Path]:
    root = Path(logs).parent.parent
    return [root / f"SoVITS_weights_{s}" for s in WEIGHT_SUFFIXES]


def find_epochs(logs: Path) -> list[Epoch]:
    """The experiment's SoVITS checkpoints, by epoch then steps."""
    exp = Path(logs).name
    pattern = re.compile(rf"{re.escape(exp)}_e(\d+)_s(\d+)\.pth")
    found = []
    for directory in weight_dirs(logs):
        if directory.is_dir():
            for path in directory.iterdir():
                if m := pattern.fullmatch(path.name):
                    found.append((int(m[1]), int(m[2]), path))
    if not found:
        searched = ", ".join(f"{d}/{exp}_e*_s*.pth" for d in weight_dirs(logs))
        raise EpochError(f"no SoVITS epoch of experiment {exp!r}; searched {searched}")
    found.sort(key=lambda e: (e[0], e[1], str(e[2])))
    counts: dict[int, int] = {}
    for epoch, _, _ in found:
        counts[epoch] = counts.get(epoch, 0) + 1
    return [
        Epoch(e, s, p, f"e{e}" if counts[e] == 1 else f"e{e}_s{s}") for e, s, p in found
    ]


def load_epoch(epoch: Epoch) -> SovitsModel:
    """The CPU torch model of one epoch; EpochError names the file on failure."""
    try:
        return SovitsModel.from_checkpoint(
            load_sovits_checkpoint(epoch.path), str(epoch.path)
        )
    except (CheckpointError, ValueError, KeyError, OSError, RuntimeError) as exc:
        where = "" if str(epoch.path) in str(exc) else f"{epoch.path}: "
        raise EpochError(f"epoch {epoch.label}: {where}{exc}") from exc
