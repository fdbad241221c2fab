"""The ``text_proj`` graph: text embeddings to talker rows, ``rows`` at a time.

Upstream's ``text_projection`` (``Qwen3TTSTalkerResizeMLP``: Linear, SiLU,
Linear) works row by row, so a prompt's text rows go through the fixed
``[R, Dt]`` graph in batches of R, the last one zero-padded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from daemon.engines.qwen3.tts.graphio import text_proj_io
from daemon.engines.qwen3.tts.params import TtsParams
from daemon.sdk.ar.bound import BoundGraph

if TYPE_CHECKING:
    from daemon.sdk.graphs import Runner


class TextProjection:
    """``[n, Dt]`` float32 -> ``[n, Ht]`` float32 through ``text_proj``."""

    def __init__(self, p: TtsParams, runner: Runner) -> None:
        self.rows, self.hidden = p.text.rows, p.text.hidden
        self.graph = BoundGraph(runner, text_proj_io(p))
        self.calls = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if x.ndim != 2 or x.shape[1] != self.hidden:
            raise ValueError(
                f"text_proj: rows must be [n, {self.hidden}], found {list(x.shape)}"
            )
        b = self.graph.bind()
        out = []
        for start in range(0, len(x), self.rows):
            part = x[start : start + self.rows]
            b["x"][: len(part)] = part
            b["x"][len(part) :] = 0.0
            self.graph.execute()
            self.calls += 1
            out.append(np.array(b["y"][: len(part)], np.float32))
        if not out:
            return np.zeros((0, b["y"].shape[1]), np.float32)
        return np.concatenate(out)
