"""Parity gates of the ``ref_enc`` and ``sv`` graphs.

CPU: the exported fp32 graphs, driven by the runtime's own ``Style``
(daemon/engines/gptsovits/reference/style.py: fbank, spectrogram, padding,
masks) on onnxruntime, against the torch modules on the UNPADDED features, as
upstream runs them, cast to float64: relative error < max(1e-4, 1.41 x the
modules' own float32 error) for the sv embedding and for ge / ge512
(scripts/common/floor.py).

Simulator: the compiled graphs against the fp32 ONNX on the same static
inputs, cosine >= 0.999 (as the other graphs' simulator gates).

The probe clip is shorter than the graphs' windows, so the padding and masks
are exercised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from daemon.engines.gptsovits.reference.audio import SPEC_RATE, sv_copy
from daemon.engines.gptsovits.reference.params import ReferenceParams
from daemon.engines.gptsovits.reference.spectrogram import linear_spectrogram
from daemon.engines.gptsovits.reference.style import Style
from daemon.sdk.audio.fbank import kaldi_fbank
from scripts.common.build.runners import Simulator, cpu_runner
from scripts.common.floor import as64, in_float64, rel_gate
from scripts.gptsovits.models.eres2net import ERes2NetV2
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.verify.cpu import enforce
from scripts.gptsovits.verify.sim import SimResult, _cosine_gate, _run

#: the fixed bound, widened to the modules' own float32 error where that misses it
MAX_REL_ERR = 1e-4
#: a 3 s probe: upstream's shortest reference
PROBE_SECONDS = 3.0
#: harmonics of a 140 Hz voice-like tone
PROBE_F0, PROBE_HARMONICS = 140.0, 12


def probe_clip(seconds: float = PROBE_SECONDS, seed: int = 0) -> np.ndarray:
    """A deterministic voice-like 32 kHz clip: harmonics with a moving pitch,
    noise, a pause."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(SPEC_RATE * seconds)) / SPEC_RATE
    phase = 2 * np.pi * PROBE_F0 * (t + 0.1 * np.sin(2 * np.pi * 0.7 * t))
    x = sum(0.3 / k * np.sin(k * phase) for k in range(1, PROBE_HARMONICS + 1))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t)) + 0.01 * rng.standard_normal(t.size)
    x[t.size // 2 : t.size // 2 + SPEC_RATE // 5] = 0.0
    return x.astype(np.float32)


def reference_params(
    sovits: SovitsModel, spec_frames: int, fbank_frames: int
) -> ReferenceParams:
    """The ``params.reference`` sizes the style graphs are exported at
    (hubert_samples is not theirs; any valid count)."""
    return ReferenceParams(
        hubert_samples=1,
        spec_frames=spec_frames,
        fbank_frames=fbank_frames,
        sv_dim=sovits.dims.sv,
    )


def _style(ref_onnx: Path, sv_onnx: Path, rp: ReferenceParams) -> Style:
    return Style(cpu_runner(ref_onnx, "ref_enc"), cpu_runner(sv_onnx, "sv"), rp)


def gate_reference_cpu(
    sovits: SovitsModel,
    sv: ERes2NetV2,
    ref_onnx: Path,
    sv_onnx: Path,
    rp: ReferenceParams,
    seconds: float = PROBE_SECONDS,
) -> dict[str, float]:
    """sv, then ref_enc (fed our own sv embedding and, separately, torch's),
    each against torch on the unpadded features."""
    clip = probe_clip(seconds)
    wav16 = sv_copy(clip)
    spec = linear_spectrogram(clip)
    style = _style(ref_onnx, sv_onnx, rp)
    fbank, spec_t = torch.from_numpy(kaldi_fbank(wav16))[None], torch.from_numpy(spec)

    def upstream(fbank: torch.Tensor, spec: torch.Tensor) -> list[np.ndarray]:
        with torch.no_grad():
            emb = sv(fbank)
            return [t.numpy() for t in (emb, *sovits.global_embedding(spec[None], emb))]

    want = upstream(fbank, spec_t)
    with in_float64(sv), in_float64(sovits):
        exact = upstream(as64(fbank), as64(spec_t))
    got_emb = style.embedding(wav16)
    got_ge, got_512 = style.style(spec, want[0])
    chained = style(clip)
    gates = {
        "sv": (0, got_emb),
        "ref_enc ge": (1, got_ge),
        "ref_enc ge512": (2, got_512),
        "style ge (sv -> ref_enc)": (1, chained[0]),
    }
    return {
        name: enforce(rel_gate(name, MAX_REL_ERR, exact[i], want[i], got))
        for name, (i, got) in gates.items()
    }


def _feeds(style: Style) -> dict[str, dict[str, np.ndarray]]:
    """The static inputs the last ``style(...)`` call bound, by graph."""
    pick = {"sv": ("fbank", "mask"), "ref_enc": ("spec", "mask", "sv")}
    return {
        "sv": {k: style.sv.buffers[k].copy() for k in pick["sv"]},
        "ref_enc": {k: style.ref.buffers[k].copy() for k in pick["ref_enc"]},
    }


def gate_reference_sim(
    sim: Simulator,
    bins: dict[str, Path],
    ref_onnx: Path,
    sv_onnx: Path,
    rp: ReferenceParams,
    seconds: float = PROBE_SECONDS,
) -> dict[str, SimResult]:
    """``bins`` maps "sv" / "ref_enc" to their compiled binaries."""
    style = _style(ref_onnx, sv_onnx, rp)
    style(probe_clip(seconds))
    feeds = _feeds(style)
    results = {}
    for key, onnx_path in (("sv", sv_onnx), ("ref_enc", ref_onnx)):
        seconds_run: list[float] = []
        test = _run(sim.runner(bins[key], key), feeds[key], seconds_run)
        ref = cpu_runner(onnx_path, key).run(feeds[key])
        for name, t, r in zip(
            ("emb",) if key == "sv" else ("ge", "ge512"), test, ref, strict=True
        ):
            results[f"{key} {name}"] = _cosine_gate(
                f"{key} {name}", t, np.asarray(r), seconds_run
            )
    return results
