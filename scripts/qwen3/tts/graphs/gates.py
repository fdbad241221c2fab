"""CPU gates of the Qwen3-TTS graphs (the CPU parity bar): each fp32 ONNX
graph, run through a Runner (daemon/sdk/graphs.py; `cpu_runner` for the
bundle's CPU backend), against upstream's torch modules cast to float64, each
bound by how close upstream's own float32 comes on the same inputs
(scripts/common/floor.py): relative error < max(1e-4, upstream's),
teacher-forced argmax agreement at least upstream float32's, codec SNR at
least upstream float32's less 3 dB.
Rows are scripts/common/gate_result.py `GateResult`s (the same report every
build prints).

References are full upstream forwards, which equal upstream's cached `generate`
(docs/qwen3.md, export findings for the ASR decoder; the predictor's
prefill + 14 steps are one causal forward of the same 16 rows): the talker's over prompt
+ step rows (`talker.model` + `codec_head`), the predictor's over its 16 rows per frame
(`code_predictor.model`, `lm_head[k]` on row k+1), the codec decoder's plain
forward (the speaker encoder's gates: speaker_gate.py). The graphs are driven
here with plain numpy caches (prefill padded to its bucket, one decode call per
step); the engine's own loop is gated against upstream by the parity tests
(tests/daemon/engines/qwen3/tts/test_parity_upstream.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from daemon.sdk.ar.rope import rope_tables
from daemon.sdk.graphs import Runner
from scripts.common.floor import argmax_gate, in_float64, rel_gate, snr_gate
from scripts.common.gate_result import GateResult
from scripts.qwen3.tts.graphs import codec as codec_graph
from scripts.qwen3.tts.graphs.predictor import predictor_of, predictor_rope
from scripts.qwen3.tts.graphs.talker import talker_of, talker_rope

#: the fixed relative-error bound, widened to upstream float32's own where
#: that misses it (scripts/common/floor.py)
CPU_MAX_REL_ERR = 1e-4
#: the runtime's additive mask (params.mask_value)
MASK = -100.0


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


def _run(runner: Runner, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    outs = runner.run(dict(feeds))
    return {name: outs[i] for name, i in runner.output_index.items()}


def _shape(runner: Runner, name: str) -> tuple[int, ...]:
    (spec,) = [t for t in runner.inputs if t.name == name]
    return tuple(spec.shape)


def _dtype(runner: Runner, name: str) -> Any:
    (spec,) = [t for t in runner.inputs if t.name == name]
    return np.dtype(spec.dtype)


def _both(fn: Any, module: Any, *args: Any) -> tuple[Any, Any]:
    """``fn(*args)`` with ``module`` in float32, then cast to float64 (the
    float64 run gets float64 inputs: float32 arrays in ``args`` are cast)."""
    want32 = fn(*args)
    with in_float64(module):
        want64 = fn(*(_as64(a) for a in args))
    return want32, want64


def _as64(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.dtype == np.float32:
        return a.astype(np.float64)
    if isinstance(a, torch.Tensor) and a.dtype == torch.float32:
        return a.double()
    return a


def _rel(name: str, want: tuple[Any, Any], got: np.ndarray) -> GateResult:
    """``want``: upstream's (float32, float64) outputs."""
    return rel_gate(name, CPU_MAX_REL_ERR, want[1], want[0], got)


def _argmax(name: str, want: tuple[Any, Any], got: np.ndarray) -> GateResult:
    return argmax_gate(name, want[1], want[0], got)


# ---------------------------------------------------------------- text_proj
def gate_text_proj(model: Any, runner: Runner, ids: Sequence[int]) -> GateResult:
    """text_proj on the text embeddings of `ids` (right-padded to its rows)."""
    talker = talker_of(model)
    rows = _shape(runner, "x")[0]
    if len(ids) > rows:
        raise ValueError(f"{len(ids)} ids for a text_proj of {rows} rows")
    emb = talker.model.text_embedding.weight[torch.as_tensor(list(ids))].detach()

    def ref(e: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            return talker.text_projection(e).numpy()

    want = _both(ref, talker.text_projection, emb)
    x = np.zeros((rows, emb.shape[1]), np.float32)
    x[: len(ids)] = _np(emb)
    got = _run(runner, {"x": x})["y"][: len(ids)]
    return _rel("text_proj", want, got)


# ------------------------------------------------------------------- talker
def talker_reference(model: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upstream's codec_head logits and final-normed hidden [n, ·] of one full
    talker forward over input rows [n, Ht] (positions 0..n-1), in the rows'
    dtype (float64 rows for a talker cast to float64)."""
    talker = talker_of(model)
    x = torch.from_numpy(np.ascontiguousarray(rows))[None]
    with torch.no_grad():
        h = talker.model(inputs_embeds=x, use_cache=False).last_hidden_state
        return talker.codec_head(h)[0].numpy(), h[0].numpy()


def talker_graphs(
    model: Any,
    prefill: Runner,
    decode: Runner,
    prompt: np.ndarray,
    steps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Logits and h [1 + T, ·]: the prefill's over `prompt` [n, Ht] (padded to
    its bucket), then one decode call per row of `steps` [T, Ht]."""
    p, length = _shape(prefill, "x")[1], _shape(decode, "k_cache")[2]
    n, total = len(prompt), len(prompt) + len(steps)
    if n > p or total > length:
        raise ValueError(f"{n} + {len(steps)} rows for buckets {p} / {length}")
    rope = talker_rope(model)
    hd = _shape(prefill, "cos")[2]
    cos, sin = rope_tables(hd, rope.theta, rope.attention_scaling, max(p, length))
    x = np.zeros((1, p, prompt.shape[1]), np.float32)
    x[0, :n] = prompt
    mask = np.triu(np.full((p, p), MASK, np.float32), 1)
    mask[:, n:] = MASK
    last = np.zeros((1, p), np.float32)
    last[0, n - 1] = 1.0
    out = _run(
        prefill,
        {
            "x": x,
            "mask": mask[None, None],
            "cos": cos[None, :p],
            "sin": sin[None, :p],
            "last": last,
        },
    )
    kv = _dtype(decode, "k_cache")
    k_cache = np.zeros(_shape(decode, "k_cache"), kv)
    v_cache = np.zeros_like(k_cache)
    k_cache[:, :, :n], v_cache[:, :, :n] = out["k"][:, :, :n], out["v"][:, :, :n]
    row = np.full((1, 1, 1, length), MASK, np.float32)
    row[..., :n] = 0.0
    logits, hidden = [out["logits"][0]], [out["h"][0]]
    for i, step in enumerate(steps):
        pos = n + i
        out = _run(
            decode,
            {
                "x": step[None, None].astype(np.float32),
                "k_cache": k_cache,
                "v_cache": v_cache,
                "mask": row,
                "cos": cos[None, pos : pos + 1],
                "sin": sin[None, pos : pos + 1],
            },
        )
        k_cache[:, :, pos], v_cache[:, :, pos] = (
            out["k_new"][:, :, 0],
            out["v_new"][:, :, 0],
        )
        row[..., pos] = 0.0
        logits.append(out["logits"][0])
        hidden.append(out["h"][0])
    return np.stack(logits), np.stack(hidden)


def gate_talker(
    model: Any, prefill: Runner, decode: Runner, prompt: np.ndarray, steps: np.ndarray
) -> list[GateResult]:
    """Talker prefill + teacher-forced steps against upstream's full forward:
    logits rel error and argmax, h rel error (h feeds the predictor)."""
    rows = np.concatenate([prompt, steps]).astype(np.float32)
    r32, r64 = _both(talker_reference, talker_of(model), model, rows)
    first = len(prompt) - 1
    logits = (r32[0][first:], r64[0][first:])
    h = (r32[1][first:], r64[1][first:])
    got_logits, got_h = talker_graphs(model, prefill, decode, prompt, steps)
    return [
        _rel("talker logits", logits, got_logits),
        _argmax("talker logits", logits, got_logits),
        _rel("talker h", h, got_h),
    ]


# ---------------------------------------------------------------- predictor
def predictor_rows(model: Any, hidden: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The predictor's 16 input rows per frame [n, 16, Ht]: past_hidden, the
    talker's codec_embedding(code0), cp_table[i-1](code_i) for i = 1..14
    (upstream's table offsets: step s embeds with table s-2 at position s)."""
    talker = talker_of(model)
    tables = predictor_of(model).model.codec_embedding
    codes = torch.as_tensor(np.asarray(codes, np.int64))
    with torch.no_grad():
        rows = [
            torch.from_numpy(np.asarray(hidden, np.float32)),
            talker.model.codec_embedding(codes[:, 0]),
        ]
        rows += [tables[i - 1](codes[:, i]) for i in range(1, codes.shape[1] - 1)]
    return _np(torch.stack(rows, dim=1))


def predictor_reference(model: Any, rows: np.ndarray) -> np.ndarray:
    """Upstream's lm_head[k] logits of row k+1, [n, 15, Vc], one forward per frame."""
    cp = predictor_of(model)
    with torch.no_grad():
        x = cp.small_to_mtp_projection(torch.from_numpy(rows))
        h = cp.model(inputs_embeds=x, use_cache=False).last_hidden_state
        heads = [cp.lm_head[k](h[:, k + 1]) for k in range(len(cp.lm_head))]
    return torch.stack(heads, dim=1).numpy()


def predictor_graph(model: Any, step: Runner, rows: np.ndarray) -> np.ndarray:
    """cp_step's logits [n, 15, Vc]: 16 calls per frame, a fresh cache each."""
    g = _shape(step, "k_cache")[2]
    rope = predictor_rope(model)
    cos, sin = rope_tables(
        _shape(step, "cos")[2], rope.theta, rope.attention_scaling, g
    )
    kv = _dtype(step, "k_cache")
    frames = []
    for frame in rows:
        k_cache = np.zeros(_shape(step, "k_cache"), kv)
        v_cache = np.zeros_like(k_cache)
        mask = np.full((1, 1, 1, g), MASK, np.float32)
        logits = []
        for pos in range(g):
            head = np.array([max(pos - 1, 0)], np.int32)
            out = _run(
                step,
                {
                    "x": frame[pos][None, None],
                    "k_cache": k_cache,
                    "v_cache": v_cache,
                    "mask": mask,
                    "cos": cos[None, pos : pos + 1],
                    "sin": sin[None, pos : pos + 1],
                    "head": head,
                },
            )
            k_cache[:, :, pos], v_cache[:, :, pos] = (
                out["k_new"][:, :, 0],
                out["v_new"][:, :, 0],
            )
            mask[..., pos] = 0.0
            if pos:
                logits.append(out["logits"][0])
        frames.append(np.stack(logits))
    return np.stack(frames)


def gate_predictor(
    model: Any, step: Runner, hidden: np.ndarray, codes: np.ndarray
) -> list[GateResult]:
    """cp_step, teacher-forced on frames `codes` [n, 16] with the talker's
    `hidden` [n, Ht] (past_hidden per frame): all 15 heads' logits."""
    rows = predictor_rows(model, hidden, codes)
    want = _both(predictor_reference, predictor_of(model), model, rows)
    got = predictor_graph(model, step, rows)
    return [_rel("predictor logits", want, got), _argmax("predictor logits", want, got)]


# -------------------------------------------------------------------- codec
def gate_codec(codec: Any, window: Runner, codes: np.ndarray) -> GateResult:
    """codec_<T> on `codes` [16, n ≤ T] right-padded with code 0, against
    upstream's decoder forward on the n frames cast to float64, bound by
    upstream float32's SNR on the same codes: SNR of the n·1920 samples."""
    t = _shape(window, "codes")[2]
    n = codes.shape[1]
    if n > t:
        raise ValueError(f"{n} frames for codec_{t}")
    padded = np.zeros((1, codes.shape[0], t), np.int32)
    padded[0, :, :n] = codes
    dec = codec_graph.decoder_of(codec)
    x = torch.as_tensor(np.asarray(codes, np.int64))[None]

    def ref() -> np.ndarray:
        with torch.no_grad():
            return dec(x).numpy()

    want32, want64 = _both(ref, dec)
    got = _run(window, {"codes": padded})["wav"][..., : want32.shape[-1]]
    return snr_gate(f"codec_{t}", f"forward ({n} of {t} frames)", want64, want32, got)
