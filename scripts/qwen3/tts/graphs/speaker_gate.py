"""The speaker_<F> gates: each graph takes every clip length its bucket holds.

CPU: each bucket at the shortest clip it holds (one frame over the bucket
below, or the encoder's minimum), an odd length between and the bucket itself,
fed as the engine feeds it (daemon/engines/qwen3/tts/xvector.py
``speaker_feeds``), against upstream's speaker encoder on the unpadded mel of
that length.  Simulator: the odd length of each bucket, the binary against the
fp32 graph (cosine, asr/gates.py ``sim_gate``) and, reported, its relative
error to upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import torch

from daemon.engines.qwen3.tts.xvector import speaker_feeds
from daemon.sdk.graphs import Runner
from scripts.common.gate_result import GateResult
from scripts.common.parity import rel_error
from scripts.common.sim_gate import sim_gate
from scripts.qwen3.tts.graphs.speaker import encoder_of, reflect_pad

#: upstream's x-vector of the clip itself, at every length (measured 2e-7 on
#: the tiny checkpoint's graphs, fp32 CPU); the talker sees it as a prompt row
CPU_MAX_REL_ERR: Final = 1e-5
#: the simulator's fp16 x-vector against upstream's fp32: reported with this
#: bound, not gated (the gate is sim_gate's cosine to the fp32 graph)
SIM_REPORT_REL: Final = 1e-2


def lengths(buckets: tuple[int, ...], shortest: int) -> dict[int, tuple[int, ...]]:
    """bucket -> the clip frames gated in it: the shortest it holds, an odd
    length between, the bucket."""
    out, low = {}, shortest
    for f in sorted(buckets):
        out[f] = tuple(sorted({low, min((low + f) // 2 | 1, f), f}))
        low = f + 1
    return out


def upstream(model: Any, mel: np.ndarray) -> np.ndarray:
    """Upstream's speaker encoder on an unpadded mel [n, 128]: [1, D]."""
    x = torch.from_numpy(np.ascontiguousarray(mel[None], np.float32))
    with torch.no_grad():
        return encoder_of(model)(x).float().numpy()


def _xvec(runner: Runner, mel: np.ndarray, bucket: int, pad: int) -> np.ndarray:
    outs = runner.run(speaker_feeds(mel, bucket, pad))
    return np.asarray(outs[runner.output_index["xvec"]])


def cpu_gates(
    model: Any, runners: Mapping[int, Runner], mel: np.ndarray
) -> dict[int, list[GateResult]]:
    """bucket -> its rows, one per length (``mel`` [>= largest bucket, 128]);
    none without ``runners`` (a CustomVoice build)."""
    if not runners:
        return {}
    pad = reflect_pad(model)
    out: dict[int, list[GateResult]] = {}
    for f, ns in lengths(tuple(runners), pad + 1).items():
        out[f] = []
        for n in ns:
            want = upstream(model, mel[:n])
            rel = rel_error(reference=want, test=_xvec(runners[f], mel[:n], f, pad))
            metric = f"rel error (CPU fp32, {n} of {f} frames)"
            out[f].append(
                GateResult(f"speaker_{f}", metric, rel, CPU_MAX_REL_ERR, False)
            )
    return out


def sim_gates(
    model: Any,
    sim: Runner,
    cpu: Runner,
    mel: np.ndarray,
    bucket: int,
    buckets: tuple[int, ...],
) -> tuple[list[GateResult], list[GateResult]]:
    """(the gate, the report) of ``bucket``'s binary ``sim`` at its odd
    length: cosine to the fp32 graph ``cpu``, rel error to upstream."""
    pad = reflect_pad(model)
    ns = lengths(buckets, pad + 1)[bucket]
    n = ns[len(ns) // 2]
    got = _xvec(sim, mel[:n], bucket, pad)
    gate = sim_gate("speaker", [_xvec(cpu, mel[:n], bucket, pad)], [got], False)
    rel = rel_error(reference=upstream(model, mel[:n]), test=got)
    metric = f"simulator rel error vs upstream ({n} of {bucket} frames)"
    return gate, [GateResult("speaker", metric, rel, SIM_REPORT_REL, False)]
