"""What the build's two gate stages share: how a gate's result is recorded
and what stops the build.

The gates themselves (metrics, thresholds, the graph drivers) are
scripts/qwen3/tts/graphs/gates.py (CPU vs upstream) and scripts/qwen3/asr/
gates.py ``sim_gate`` (simulator vs CPU: cosine and top-1 with the fp16-tie
rule); both stages feed them one deterministic input (pipeline/trajectory.py:
upstream's greedy run of a fixed text).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from scripts.common.gate_result import GateResult

_LOGGER = logging.getLogger(__name__)

#: graph key -> its gates (a graph gated in several pairs: each pair's)
Gates = dict[str, list[GateResult]]


class GateError(RuntimeError):
    """A gate failed; the message names graph, metric, value and threshold."""


def record(
    out: Gates, keys: Iterable[str], results: Iterable[GateResult], fatal: bool = True
) -> None:
    """Log and store each result under every key; a failure stops the build
    unless not ``fatal`` (a measurement reported, e.g. the opt-in w8a16)."""
    keys = list(keys)
    for r in results:
        _LOGGER.info("%s (%s)", r, ", ".join(keys))  # progress of a long stage
        for key in keys:
            out.setdefault(key, []).append(r)
        if fatal and not r.passed:
            raise GateError(f"gate failed: {', '.join(keys)}: {r}")


def renamed(r: GateResult, note: str) -> GateResult:
    """``r`` with ``note`` after its metric (e.g. "fp16 K/V")."""
    return GateResult(r.name, f"{r.metric} ({note})", r.value, r.threshold, r.at_least)
