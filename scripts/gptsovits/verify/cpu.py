"""Parity gates: exported static graphs on onnxruntime (CPU, fp32) against our
torch modules run the way upstream runs them (exact lengths, no padding, growing
KV cache, full-length vocoder), cast to float64, each bound by how close the
modules' own float32 comes on the same inputs (scripts/common/floor.py): T2S
logits relative error < max(1e-4, 1.41 x float32's) and top-1 at
least float32's (a pick inside float32's own error a tie), vits_enc z relative
error < max(1e-4, 1.41 x float32's), the windowed vocoder's SNR >= min(100 dB,
float32's - 3 dB). A failing gate raises GateError naming the graph, the metric
and the threshold.

The vocoder windows come from daemon/sdk/audio/windows.py, the schedule the
runtime uses, so the gate measures exactly what the board will run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch

from daemon.engines.gptsovits import layout, speed
from daemon.sdk.audio.windows import decode_windowed
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import (
    GateResult,
    argmax_gate,
    as64,
    in_float64,
    rel_gate,
    snr_gate,
)
from scripts.common.parity import rel_error, snr_db
from scripts.gptsovits.models.sovits import SovitsModel, VitsEnc
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.shapes import FRAMES_PER_TOKEN, NOISE_SCALE, GraphShapes
from scripts.gptsovits.verify.runtime import t2s_driver

log = logging.getLogger(__name__)

#: the metrics are re-exported: callers and tests name them from here
__all__ = [
    "GateError",
    "cpu_session",
    "enforce",
    "gate_t2s",
    "gate_vits_enc",
    "gate_vits_gen",
    "reference_embedding",
    "rel_error",
    "snr_db",
    "windowed_audio",
]
#: the fixed bounds, each widened to the modules' own float32 error where that
#: misses it (scripts/common/floor.py)
T2S_MAX_REL_ERR = 1e-4
T2S_STEPS = 30
VITS_ENC_MAX_REL_ERR = 1e-4
#: speed 1 (no interpolation upstream) and the ends of upstream's range
GATE_SPEEDS = (1.0, speed.MIN_SPEED, speed.MAX_SPEED)
#: the windows cut the vocoder's receptive field nowhere, so only float32
#: rounding is left: 100 dB, or float32's own SNR less 3 dB where that is lower
VITS_GEN_MIN_SNR_DB = 100.0


class GateError(RuntimeError):
    """A parity gate failed; stops the pipeline."""


def _check(graph: str, metric: str, value: float, ok: bool, threshold: str) -> None:
    log.info("%s: %s = %.4g (%s)", graph, metric, value, threshold)
    if not ok:
        raise GateError(f"{graph}: {metric} = {value:.4g} fails the gate {threshold}")


def enforce(result: GateResult, what: str = "") -> float:
    """``result``'s value, logged; GateError naming graph, metric and threshold
    when it fails (``what``: the output measured, put before the metric)."""
    metric = f"{what} {result.metric}".strip()
    op = ">=" if result.at_least else "<"
    _check(
        result.name, metric, result.value, result.passed, f"{op} {result.threshold:g}"
    )
    return result.value


def cpu_session(path: Path) -> Callable[[Mapping[str, np.ndarray]], list[np.ndarray]]:
    """``run(feeds)`` of the graph at ``path`` on the runtime's CPU backend."""
    return cpu_runner(path).run


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


def gate_t2s(
    model: T2SModel,
    prefill_onnx: Path,
    decode_onnx: Mapping[int, Path],
    shapes: GraphShapes,
    seed: int = 0,
    steps: int = T2S_STEPS,
) -> dict[str, float]:
    """Prefill + `steps` teacher-forced decode steps per KV bucket, run by the
    engine's T2S driver (fp16-KV exports keep an fp16 cache, as the NPU does)."""
    d, p = model.dims, shapes.prefill_len
    # Reference-port proportions (60 phones + 100 prompt tokens at P=512).
    n_x, n_y = max(2, p * 60 // 512), max(2, p * 100 // 512)
    s = n_x + n_y
    if s + steps > min(decode_onnx):
        raise ValueError(
            f"{s} prompt positions + {steps} steps exceed L={min(decode_onnx)}"
        )
    g = torch.Generator().manual_seed(seed)
    phones = torch.randint(0, d.phone_vocab, (n_x,), generator=g)
    bert = torch.randn(d.bert_dim, n_x, generator=g)
    prompt = torch.randint(0, d.eos, (n_y,), generator=g)
    tokens = torch.randint(0, d.eos, (steps,), generator=g)
    ref = _np(model.reference_logits(phones, bert, prompt, tokens))
    with in_float64(model):
        exact = model.reference_logits(phones, bert.double(), prompt, tokens)
    runners = {layout.T2S_PREFILL: cpu_runner(prefill_onnx)}
    for length, path in decode_onnx.items():
        runners[layout.t2s_decode_key(length)] = cpu_runner(path)
    t2s = t2s_driver(model, shapes, runners)
    bert_rows = np.ascontiguousarray(_np(bert.T))
    inputs = phones.numpy(), bert_rows, prompt.numpy(), tokens.numpy()
    results: dict[str, float] = {}
    for length in sorted(decode_onnx):
        test = t2s.teacher_forced(*inputs, kv_len=length)
        graph = f"t2s_prefill+t2s_decode_L{length}"
        err = rel_gate(graph, T2S_MAX_REL_ERR, exact, ref, test)
        top1 = argmax_gate(graph, exact, ref, test)
        results[f"t2s_L{length}_rel_err"] = enforce(err, "logits")
        results[f"t2s_L{length}_top1"] = enforce(top1)
    return results


def reference_embedding(
    model: SovitsModel, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """ge, ge512 of a random 2 s reference spectrogram and SV embedding."""
    g = torch.Generator().manual_seed(seed)
    spec = torch.rand(1, model.dims.ref_bins, 100, generator=g)
    return model.global_embedding(spec, torch.randn(1, model.dims.sv, generator=g))


def gate_vits_enc(
    model: SovitsModel,
    onnx_path: Path,
    shapes: GraphShapes,
    seed: int = 0,
    speeds: Sequence[float] = GATE_SPEEDS,
) -> dict[str, float]:
    """Padded static graph, its speed as the runtime's stretch matrix, vs the
    module run as upstream runs it (exact lengths, F.interpolate) per speed."""
    d, fr, tt = model.dims, shapes.vits_frames, shapes.vits_phones
    n_ph = tt * 3 // 4  # well inside, so padding is exercised
    g = torch.Generator().manual_seed(seed)
    phones = torch.randint(0, d.phone_vocab, (n_ph,), generator=g)
    ge, ge512 = reference_embedding(model, seed)
    run = cpu_session(onnx_path)
    results: dict[str, float] = {}
    for sp in speeds:
        # well inside too, and the stretched frames must fit the graph
        n_tok = min(fr * 3 // 10, speed.max_tokens(fr, FRAMES_PER_TOKEN, sp))
        f = FRAMES_PER_TOKEN * n_tok
        out = speed.stretched_frames(f, sp)
        codes = torch.randint(0, d.codebook, (n_tok,), generator=g)
        noise = torch.randn(1, d.inter, out, generator=g) * NOISE_SCALE
        with torch.no_grad():
            ssl, text = model.latent(codes), model.phone_embedding(phones)
            fwd = (ssl, text, ge512, ge, noise)
            ref = _np(VitsEnc(model).upstream(*fwd, sp))
            with in_float64(model):
                exact = VitsEnc(model).upstream(*(as64(t) for t in fwd), sp)
        feeds = {
            "ssl": _pad(ssl, fr),
            "y_mask": _pad(torch.ones(1, 1, f), fr),
            "text": _pad(text, tt),
            "text_mask": _pad(torch.ones(1, 1, n_ph), tt),
            "ge512": _np(ge512),
            "ge": _np(ge),
            "noise": _pad(noise, fr),
            speed.STRETCH: np.zeros((1, fr, fr), np.float32),
            speed.Z_MASK: _pad(torch.ones(1, 1, out), fr),
        }
        speed.fill_stretch(feeds[speed.STRETCH][0], f, sp)
        (z,) = run(feeds)
        graph = f"vits_enc (speed {sp:g})"
        gate = rel_gate(graph, VITS_ENC_MAX_REL_ERR, exact, ref, z[..., :out])
        err = enforce(gate, "z")
        pad_max = float(np.abs(z[..., out:]).max()) if out < fr else 0.0
        _check(graph, "max |z| on padding", pad_max, pad_max == 0.0, "= 0")
        results[f"vits_enc_rel_err_speed{sp:g}"] = err
    results["vits_enc_rel_err"] = max(results.values())
    return results


def _pad(x: torch.Tensor, n: int) -> np.ndarray:
    out = np.zeros(x.shape[:-1] + (n,), dtype=np.float32)
    out[..., : x.shape[-1]] = _np(x)
    return out


def windowed_audio(
    run: Callable[[Mapping[str, np.ndarray]], list[np.ndarray]],
    z: np.ndarray,
    ge: np.ndarray,
    shapes: GraphShapes,
    hop: int,
) -> np.ndarray:
    """Vocoder output of z [1,C,F] stitched from vits_gen window calls."""

    def decode(chunk: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return run({"z": chunk[None], "ge": ge, "mask": mask[None, None]})[0]

    pieces = decode_windowed(z[0], decode, hop, shapes.gen_window, shapes.gen_overlap)
    return np.concatenate(list(pieces))


def gate_vits_gen(
    model: SovitsModel,
    onnx_path: Path,
    shapes: GraphShapes,
    frames: Sequence[int] | None = None,
    seed: int = 0,
) -> dict[str, float]:
    """Windowed graph vs the full-length generator, for lengths below, at and
    well above one window (so both window clamps are used)."""
    win = shapes.gen_window
    # Short (one masked window), exactly one window, and three windows: clamped
    # to the start, free in the middle, clamped to the end.
    frames = frames or (win // 2 - 7, win, win + shapes.gen_step + 2)
    ge, _ = reference_embedding(model, seed)
    run = cpu_session(onnx_path)
    g = torch.Generator().manual_seed(seed)
    worst = float("inf")
    for f in frames:
        z = torch.randn(1, model.dims.inter, f, generator=g)
        full = (z, ge, torch.ones(1, 1, f))
        with torch.no_grad():
            ref = _np(model.dec(*full))[0, 0]
            with in_float64(model.dec):
                exact = model.dec(*(t.double() for t in full))[0, 0]
        test = windowed_audio(run, _np(z), _np(ge), shapes, model.dims.hop)
        if test.shape != ref.shape:
            raise GateError(
                f"vits_gen: windowed audio {test.shape} != full {ref.shape}"
            )
        what = f"windowed vs full-length ({f} frames)"
        gate = snr_gate("vits_gen", what, exact, ref, test, VITS_GEN_MIN_SNR_DB)
        worst = min(worst, enforce(gate))
    return {"vits_gen_snr_db": float(worst)}
