"""Parity gates of the prompt-token graphs ``hubert`` and ``ssl_quant``.

The reference is upstream's own computation: transformers' HubertModel on the
UNPADDED clip + 9600 zeros, then ssl_proj and the nearest codebook entry
(scripts/gptsovits/models/hubert.py reference_tokens). The graphs run through the
runtime's PromptTokens (daemon/engines/gptsovits/reference/prompt.py), i.e.
padded to the static window with the runtime's masks.

CPU (onnxruntime fp32), against upstream cast to float64 and bound by upstream
float32's own distance to it (scripts/common/floor.py): hidden rel error <
max(1e-4, 1.41 x float32's) and at least as many tokens equal to float64's as
float32's (all of them for a well-conditioned checkpoint).
Simulator (fp16 HTP) vs those CPU graphs: hidden cosine >= 0.999; token
agreement is measured and returned (fp16 may move a near-tie to the
neighbouring code).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.reference.params import PROMPT_ZEROS, ReferenceParams
from daemon.engines.gptsovits.reference.prompt import PromptTokens, conv_lengths
from scripts.common.build.runners import Simulator, cpu_runner
from scripts.common.floor import in_float64, index_gate, rel_gate
from scripts.common.parity import cosine
from scripts.gptsovits.models.hubert import reference_codes
from scripts.gptsovits.verify.cpu import _check, enforce
from scripts.gptsovits.verify.sim import SimResult

if TYPE_CHECKING:
    from transformers import HubertModel

    from scripts.gptsovits.models.sovits import SovitsModel

log = logging.getLogger(__name__)

#: the fixed bound, widened to upstream float32's own error where that misses it
HUBERT_MAX_REL_ERR = 1e-4
SIM_MIN_COSINE = 0.999
#: the clip the gates use: a 3.5 s voiced sweep (within upstream's 3..10 s)
GATE_SECONDS = 3.5
GATE_RATE = 16000


def gate_clip(seconds: float = GATE_SECONDS, seed: int = 0) -> np.ndarray:
    """A voiced 16 kHz test clip: a gliding tone plus a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * GATE_RATE)) / GATE_RATE
    pitch = 120 + 40 * np.sin(2 * np.pi * 0.7 * t)
    x = 0.3 * np.sin(2 * np.pi * np.cumsum(pitch) / GATE_RATE)
    return (x + 0.02 * rng.standard_normal(len(t))).astype(np.float32)


def _upstream(
    hubert: HubertModel, sovits: SovitsModel, clip: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Hidden [ssl, T] and tokens of upstream's HubertModel + extract_latent on
    the clip and its zeros (scripts/gptsovits/models/hubert.py reference_tokens), in
    the modules' dtype."""
    wav = torch.from_numpy(np.concatenate([clip, np.zeros(PROMPT_ZEROS, np.float32)]))
    wav = wav.to(next(hubert.parameters()).dtype)
    with torch.no_grad():
        hidden = hubert(wav[None])["last_hidden_state"].transpose(1, 2)
        return hidden[0].numpy(), reference_codes(sovits, hidden).numpy()


def _run(
    runners: Mapping[str, Any], rp: ReferenceParams, codebook: np.ndarray, clip
) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    prompt = PromptTokens(runners["hubert"], runners["ssl_quant"], rp, codebook)
    tokens = prompt(clip)
    hidden = np.asarray(prompt.hubert.buffers["hidden"][0], np.float32)
    return hidden, tokens, (prompt.hubert.graph_seconds, prompt.quant.graph_seconds)


def _cpu_runners(hubert_onnx: Path, ssl_quant_onnx: Path) -> dict[str, Any]:
    """The two prompt graphs on onnxruntime CPU, by graph name."""
    return {"hubert": cpu_runner(hubert_onnx), "ssl_quant": cpu_runner(ssl_quant_onnx)}


def _codebook(sovits: SovitsModel) -> np.ndarray:
    return sovits.quantizer.embed.detach().float().numpy()


def gate_hubert_cpu(
    hubert: HubertModel,
    sovits: SovitsModel,
    hubert_onnx: Path,
    ssl_quant_onnx: Path,
    rp: ReferenceParams,
    clip: np.ndarray | None = None,
) -> dict[str, float]:
    """Graphs on onnxruntime CPU vs upstream on the unpadded clip."""
    clip = gate_clip() if clip is None else clip
    want_h, want_t = _upstream(hubert, sovits, clip)
    with in_float64(hubert), in_float64(sovits):
        exact_h, exact_t = _upstream(hubert, sovits, clip)
    runners = _cpu_runners(hubert_onnx, ssl_quant_onnx)
    hidden, tokens, _ = _run(runners, rp, _codebook(sovits), clip)
    got_h = hidden[:, : want_h.shape[1]]
    err = rel_gate("hubert", HUBERT_MAX_REL_ERR, exact_h, want_h, got_h)
    agree = index_gate("ssl_quant", "CPU prompt tokens", exact_t, want_t, tokens)
    return {
        "hubert": enforce(err, "HubertModel hidden (unpadded)"),
        "ssl_quant": enforce(agree),
    }


def gate_hubert_sim(
    sim: Simulator,
    bins: Mapping[str, Path],
    hubert_onnx: Path,
    ssl_quant_onnx: Path,
    rp: ReferenceParams,
    sovits: SovitsModel,
    clip: np.ndarray | None = None,
) -> dict[str, SimResult]:
    """Compiled graphs on the simulator vs the same graphs on onnxruntime CPU
    (which gate_hubert_cpu proved equal to upstream): hidden cosine gated,
    token agreement measured."""
    clip = gate_clip() if clip is None else clip
    cb = _codebook(sovits)
    want_h, want_t, _ = _run(_cpu_runners(hubert_onnx, ssl_quant_onnx), rp, cb, clip)
    keys = {"hubert": bins[layout.HUBERT], "ssl_quant": bins[layout.SSL_QUANT]}
    hidden, tokens, secs = _run(sim.open(keys), rp, cb, clip)
    valid = prompt_frames(len(clip))
    cos = cosine(want_h[:, :valid], hidden[:, :valid])
    _check(
        "hubert",
        "simulator cosine",
        cos,
        cos >= SIM_MIN_COSINE,
        f">= {SIM_MIN_COSINE:g}",
    )
    agree = _agreement(tokens, want_t)
    log.info(
        "ssl_quant: simulator token agreement %.4g (%d tokens, measured)",
        agree,
        len(want_t),
    )
    return {
        "hubert": SimResult("cosine", cos, [round(secs[0], 2)]),
        "ssl_quant": SimResult("token agreement", agree, [round(secs[1], 2)]),
    }


def prompt_frames(clip_samples: int) -> int:
    """Valid HuBERT frames of a clip + the appended zeros."""
    return conv_lengths(clip_samples + PROMPT_ZEROS)[-1]


def _agreement(tokens: np.ndarray, want: np.ndarray) -> float:
    if len(tokens) != len(want):
        return 0.0
    return float(np.mean(tokens == want))
