"""Parity gates of the Qwen3-ASR graphs.

CPU gates: the fp32 ONNX graphs on the runtime's CPU backend (daemon/sdk/
graphs.py `CpuRunner`) against upstream's torch modules cast to float64, each
bound by how close upstream's own float32 comes on the same inputs
(scripts/common/floor.py): relative error < max(1e-4, 1.41 x upstream
float32's), teacher-forced argmax agreement at least upstream float32's (a
pick inside upstream float32's own error a tie). The encoder's reference is
upstream's audio tower with upstream's own window mask (scripts/qwen3/asr/
oracle.py `encode_windowed`); the decoder's is one full-sequence upstream
forward, which equals upstream's greedy `generate` logits (docs/qwen3.md, export
findings: 1.8e-7).

The graphs are driven by the engine's own code (house style: no twin loops):
its WindowEncoder per window, its Decoder (CPU embeddings and RoPE, the AR
toolkit's caches, masks and loop) for prefill and steps. Both take any Runner:
CPU sessions here, simulator binaries in the pipeline's simulator gates.

Simulator gates: scripts/common/sim_gate.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from daemon.engines.qwen3.asr.decoder import Decoder
from daemon.engines.qwen3.asr.encoder import WindowEncoder
from daemon.engines.qwen3.asr.params import AsrParams, decode_key, prefill_key
from daemon.sdk.ar import loop
from daemon.sdk.graphs import Runner
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import argmax_gate, as64, in_float64, rel_gate
from scripts.common.gate_result import GateResult

__all__ = ["GateResult", "gate_decoder", "gate_encoder"]
#: the CPU gates' fixed relative-error bound, widened to upstream float32's
#: own where that misses it (scripts/common/floor.py)
CPU_MAX_REL_ERR = 1e-4


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


# ------------------------------------------------------------------ encoder
def encode_windows(params: AsrParams, runner: Runner, mel: np.ndarray) -> np.ndarray:
    """The audio rows [N, D] of mel [M, F] as the engine makes them: its
    WindowEncoder on each of upstream's windows, rows concatenated."""
    window = WindowEncoder(params, runner)
    frames, step = mel.shape[1], params.mel.window_frames
    feats = np.ascontiguousarray(mel.T, np.float32)
    rows = [window.encode(feats[s : s + step], frames) for s in range(0, frames, step)]
    return np.concatenate(rows)


def gate_encoder(
    model: Any, params: AsrParams, onnx_path: Path, mel: np.ndarray
) -> GateResult:
    """The encoder graph on mel [M, F] against upstream's windowed encoder
    in float64, bound by upstream's float32 windowed encoder."""
    from scripts.qwen3.asr.oracle import encode_windowed

    want32 = encode_windowed(model, mel)
    with in_float64(model.thinker.audio_tower):
        want64 = encode_windowed(model, mel)
    got = encode_windows(params, cpu_runner(Path(onnx_path)), mel)
    if got.shape != want32.shape:
        raise ValueError(f"encoder tokens {got.shape} vs upstream {want32.shape}")
    return rel_gate("encoder", CPU_MAX_REL_ERR, want64, want32, got)


# ------------------------------------------------------------------ decoder
def _shape(runner: Runner, name: str) -> tuple[int, ...]:
    """A runner's tensor shape by name (backends order their inputs differently)."""
    (spec,) = [t for t in runner.inputs if t.name == name]
    return tuple(spec.shape)


def decoder_logits(
    params: AsrParams,
    model: Any,
    prefill: Runner,
    decode: Runner,
    prompt: np.ndarray,
    tokens: Sequence[int],
) -> np.ndarray:
    """Logits [1 + T, V]: the prefill's over `prompt` [n, H] (embeddings, audio
    rows scattered in), then one decode step per token of `tokens`, run by the
    engine's Decoder on this (prefill, decode) pair of graphs."""
    p, length = _shape(prefill, "x")[1], _shape(decode, "k_cache")[2]
    pair = replace(params, prefill_buckets=(p,), kv_buckets=(length,))
    embed = _np(model.thinker.model.embed_tokens.weight)
    graphs = {prefill_key(p): prefill, decode_key(length): decode}
    logits, feed = Decoder(pair, embed, graphs).start(prompt, len(tokens))
    return loop.teacher_forced(logits, feed, tokens)


def upstream_logits(
    model: Any, prompt: np.ndarray, tokens: Sequence[int]
) -> np.ndarray:
    """Upstream's raw LM-head logits [1 + T, V] of one full forward over the
    prompt and `tokens`: the rows from the last prompt position on, in the
    model's dtype (float64 for a thinker cast to float64; `prompt` is cast)."""
    embed = model.thinker.model.embed_tokens.weight
    ids = torch.as_tensor(np.asarray(tokens, np.int64))
    rows = torch.from_numpy(np.ascontiguousarray(prompt)).to(embed.dtype)
    x = torch.cat([rows, embed[ids]]).unsqueeze(0)
    with torch.no_grad():
        out = model.thinker(
            inputs_embeds=x, attention_mask=torch.ones(1, x.shape[1], dtype=torch.long)
        )
    return out.logits[0, len(prompt) - 1 :].numpy()


def gate_decoder(
    model: Any,
    params: AsrParams,
    prefill_onnx: Path,
    decode_onnx: Path,
    prompt: np.ndarray,
    tokens: Sequence[int],
) -> list[GateResult]:
    """Prefill + teacher-forced decode steps (fp32 ONNX on the CPU backend)
    against upstream's full forward in float64, bound by upstream's float32
    forward: rel error and argmax agreement."""
    want32 = upstream_logits(model, prompt, tokens)
    with in_float64(model.thinker):
        want64 = upstream_logits(model, as64(prompt), tokens)
    got = decoder_logits(
        params,
        model,
        cpu_runner(Path(prefill_onnx)),
        cpu_runner(Path(decode_onnx)),
        prompt,
        tokens,
    )
    return [
        rel_gate("decoder", CPU_MAX_REL_ERR, want64, want32, got),
        argmax_gate("decoder", want64, want32, got),
    ]


def prompt_embeddings(model: Any, ids: Sequence[int], audio: np.ndarray) -> np.ndarray:
    """Token embeddings [n, H] of `ids` with the audio rows [N, H] scattered
    where the ids are the audio pad (upstream `get_placeholder_mask`)."""
    thinker = model.thinker
    x = _np(thinker.model.embed_tokens.weight)[np.asarray(ids)]
    slots = np.asarray(ids) == thinker.config.audio_token_id
    if slots.sum() != len(audio):
        raise ValueError(f"{slots.sum()} audio pads for {len(audio)} audio rows")
    x[slots] = audio
    return x
