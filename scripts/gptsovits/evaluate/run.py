"""The evaluation loop of ``scripts/eval-gptsovits``: the clips are read once, then
each epoch is loaded, resynthesises every clip and is scored; an unreadable
checkpoint is recorded and skipped, the others go on."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scripts.gptsovits.evaluate.clips import TrainingClip, load_clips
from scripts.gptsovits.evaluate.epochs import Epoch, EpochError, find_epochs, load_epoch
from scripts.gptsovits.evaluate.metrics import (
    breath_tonality,
    log_mel_distance,
    whine_db,
)
from scripts.gptsovits.evaluate.report import RECORDING, Scores, recommend
from scripts.gptsovits.evaluate.resynth import check_clips, resynthesise
from scripts.gptsovits.pipeline.sources import TrainingFolderError

Progress = Callable[[str], None]


def progress_to_stderr(message: str) -> None:
    print(f"eval_voice: {message}", file=sys.stderr, flush=True)


@dataclass
class Evaluation:
    recording: Scores
    epochs: list[Scores] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # one message per epoch

    @property
    def best(self) -> Scores | None:
        return recommend(self.epochs) if self.epochs else None


def recording_scores(clips: Sequence[TrainingClip]) -> Scores:
    """The recordings' own tonality and whine (their distance to themselves: 0)."""
    return Scores.of_clips(
        RECORDING,
        None,
        [breath_tonality(c.audio, c.breaths) for c in clips],
        [whine_db(c.audio) for c in clips],
        [0.0 for _ in clips],
    )


def score_epoch(
    epoch: Epoch, clips: Sequence[TrainingClip], seed: int, progress: Progress
) -> Scores:
    """Load one epoch and score its resynthesis of every clip; clip i decodes
    the noise of seed + i whatever the epoch, so epochs differ only in weights."""
    start = time.monotonic()
    model = load_epoch(epoch)
    try:
        check_clips(model, clips)
    except ValueError as exc:
        raise EpochError(f"epoch {epoch.label}: {exc}") from exc
    tonality, whine, log_mel = [], [], []
    for i, clip in enumerate(clips):
        progress(f"  {epoch.label}: clip {i + 1}/{len(clips)} {clip.name}")
        audio = resynthesise(model, clip, seed + i)
        n = min(len(audio), len(clip.audio))
        tonality.append(breath_tonality(audio[:n], clip.breaths))
        whine.append(whine_db(audio))
        log_mel.append(log_mel_distance(audio[:n], clip.audio[:n]))
    return Scores.of_clips(
        epoch.label, epoch.epoch, tonality, whine, log_mel, time.monotonic() - start
    )


def evaluate(
    logs: Path, clips: int, seed: int = 0, progress: Progress = progress_to_stderr
) -> Evaluation:
    """Every epoch of the experiment of `logs` on its first `clips` clips."""
    if not Path(logs).is_dir():
        raise TrainingFolderError(f"training folder {logs} does not exist")
    epochs = find_epochs(logs)
    progress(f"{len(epochs)} SoVITS epoch(s): {' '.join(e.label for e in epochs)}")
    loaded = load_clips(logs, clips, progress)
    breaths = sum(len(c.breaths) for c in loaded)
    progress(f"{len(loaded)} clip(s), {breaths} breath window(s)")
    result = Evaluation(recording_scores(loaded))
    for i, epoch in enumerate(epochs, 1):
        progress(f"[{i}/{len(epochs)}] {epoch.label}: {epoch.path}")
        try:
            scores = score_epoch(epoch, loaded, seed, progress)
        except EpochError as exc:
            progress(f"error: {exc}")
            result.failed.append(str(exc))
            continue
        result.epochs.append(scores)
        progress(f"[{i}/{len(epochs)}] {epoch.label} done in {scores.seconds:.1f} s")
    return result
