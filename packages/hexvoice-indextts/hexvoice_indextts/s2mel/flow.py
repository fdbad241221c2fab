"""The flow matching's Euler solver (``CFM.inference`` / ``solve_euler``) on
the CPU, around the guided-velocity graph (graphs/dit.py), in float32 as
upstream runs it:

- the start is noise ``z`` [80, T] (upstream: one ``torch.randn([1, 80, T])``
  right after the GPT; the daemon draws its own), the prompt's frames zeroed;
- 25 steps (infer_v2's ``diffusion_steps``) over ``torch.linspace(0, 1, 26)``,
  whose float32 values come from torch's own two-sided formula; ``t`` is
  advanced by adding each ``dt`` (not read from the table);
- each step: ``x + dt * v``, the prompt's frames zeroed again; the guided
  velocity ``v`` is the graph's.

The timestep's sinusoid (``TimestepEmbedder.timestep_embedding``) is computed
here: ``cat(cos(1000 t f), sin(1000 t f))`` with the checkpoint's ``freqs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
from daemon.sdk.ar.loop import Checkpoint

#: infer_v2: diffusion_steps, and TimestepEmbedder's scale
STEPS: Final = 25
TIME_SCALE: Final = np.float32(1000)

#: ``velocity(x [80, T], t_freq [1, 256])``: the guided velocity [80, T]
Velocity = Callable[[np.ndarray, np.ndarray], np.ndarray]


def linspace(start: float, end: float, steps: int) -> np.ndarray:
    """float32 ``torch.linspace``: ``start + step * i`` for the first half,
    ``end - step * (steps - 1 - i)`` for the rest (ATen's scalar kernel).
    Equal to torch's for infer_v2's 26 points; for 40 and more, torch's
    vectorised kernel rounds some points of the second half differently
    (seen on AVX2)."""
    s, e = np.float32(start), np.float32(end)
    step = (e - s) / np.float32(steps - 1)
    i = np.arange(steps)
    head = s + step * i.astype(np.float32)
    tail = e - step * (steps - 1 - i).astype(np.float32)
    return np.where(i < steps // 2, head, tail).astype(np.float32)


def timestep_frequencies(t: np.float32, freqs: np.ndarray) -> np.ndarray:
    """[1, 2 * len(freqs)]: ``TimestepEmbedder.timestep_embedding(t)``."""
    args = (TIME_SCALE * np.float32(t)) * freqs.astype(np.float32)
    return np.concatenate([np.cos(args), np.sin(args)])[None].astype(np.float32)


def solve_euler(
    z: np.ndarray,
    prompt_frames: int,
    velocity: Velocity,
    freqs: np.ndarray,
    steps: int = STEPS,
    cancel: Checkpoint | None = None,
) -> np.ndarray:
    """The mel [80, T] after ``steps`` Euler steps from ``z`` [80, T]
    (``cancel`` is checked before each graph call)."""
    t_span = linspace(0.0, 1.0, steps + 1)
    x = np.array(z, np.float32)
    x[:, :prompt_frames] = 0.0
    t = t_span[0]
    for step in range(1, steps + 1):
        if cancel is not None:
            cancel.check()
        dt = t_span[step] - t_span[step - 1]
        x = x + dt * velocity(x, timestep_frequencies(t, freqs))
        t = t + dt
        x[:, :prompt_frames] = 0.0
    return x
