"""The decode loop, free running or teacher forced, over any KV-cached decoder.

A decoder is two things here: the logits its prefill gave, and ``feed(token)``,
which runs one decode step on ``token`` at the next position and returns that
step's logits (engines write the token's embedding into the bound input and
call ``KvGraph.step``). The same ``feed`` serves the engine's free run and the
parity gates' teacher forcing, so a gate measures the code the runtime runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

#: one decode step on a token -> that step's logits
Feed = Callable[[int], np.ndarray]
#: a step's logits -> (token, stop)
Choose = Callable[[np.ndarray], tuple[int, bool]]


class Checkpoint(Protocol):
    """A cancel token: ``check()`` raises once the request is cancelled."""

    def check(self) -> None: ...


@dataclass(frozen=True)
class Run:
    tokens: list[int]  # chosen tokens, the stopping one excluded
    limited: bool  # ended at ``limit`` tokens without a stop


def free_steps(
    logits: np.ndarray,
    choose: Choose,
    feed: Feed,
    limit: int,
    cancel: Checkpoint | None = None,
) -> Iterator[int]:
    """Choose from ``logits``, feed the token back, until ``choose`` says stop or
    ``limit`` tokens are chosen (then the last one is not fed), yielding each
    token as soon as it is chosen, so a caller can stream between graph calls.
    ``cancel`` is checked before every decode step, i.e. between two graph calls."""
    count = 0
    while True:
        token, stop = choose(logits)
        if stop:
            return
        count += 1
        yield token
        if count == limit:
            return
        if cancel is not None:
            cancel.check()
        logits = feed(token)


def free_run(
    logits: np.ndarray,
    choose: Choose,
    feed: Feed,
    limit: int,
    cancel: Checkpoint | None = None,
) -> Run:
    """:func:`free_steps` to the end: the tokens, and whether ``limit`` ended it."""
    tokens = list(free_steps(logits, choose, feed, limit, cancel))
    return Run(tokens, limited=len(tokens) == limit)


def teacher_forced(
    logits: np.ndarray, feed: Feed, tokens: Sequence[int] | np.ndarray
) -> np.ndarray:
    """float32 logits [1 + len(tokens), V]: the prefill's, then one decode step's
    per given token (whatever the model would have chosen instead)."""
    out = [np.array(logits, np.float32)]
    for token in tokens:
        out.append(np.array(feed(int(token)), np.float32))
    return np.stack(out)
