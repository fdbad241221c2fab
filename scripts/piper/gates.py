"""Stage ``gates_cpu``: the checks a Piper bundle passes before compiling.

- the decoder windows' overlap covers HiFiGAN's receptive radius, walked from
  the voice's own decoder (so windowed decoding is exact,
  daemon/sdk/audio/windows.py);
- the numpy SDP port (daemon/engines/piper/cpu.py, the weights of stage
  ``sdp``) matches the voice's own spline flows on onnxruntime, on a real
  encoding from the exported encoder (sdp_export.check_port).

A failure stops the build naming the graph, the metric and the bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from daemon.engines.piper.params import dec_key, enc_key
from scripts.common.build.stage import Results
from scripts.common.gate_result import GateResult
from scripts.common.receptive_field import check_overlap, onnx_radius, overlap_for
from scripts.piper import graphs
from scripts.piper.convert import PiperBuild
from scripts.piper.cuts import find_cuts
from scripts.piper.sdp_export import SDP_CHECK_PHONEMES, SDP_TOLERANCE, check_port


@dataclass(frozen=True)
class CpuGates:
    gates: tuple[GateResult, ...]
    #: HiFiGAN's receptive radius in frames (the bundle records it)
    radius: float
    #: the numpy SDP's max |logw| error (the bundle records it)
    sdp_err: float


def inputs(ctx: PiperBuild) -> Mapping[str, Any]:
    return {
        "voice": ctx.voice,
        "overlap": ctx.options.overlap,
        "window": ctx.options.window,
    }


def bucket_for(n: int, buckets: tuple[int, ...]) -> int:
    """The smallest bucket holding ``n`` (the largest if none does)."""
    for size in buckets:
        if n <= size:
            return size
    return buckets[-1]


def run(ctx: PiperBuild, results: Results) -> CpuGates:
    model = onnx.load(ctx.voice)
    cuts = find_cuts(model)
    o = ctx.options
    # The window overlap must cover the generator's reach (exact windows).
    radius = onnx_radius(graphs.decoder_dynamic(model, cuts), "z")
    check_overlap(o.overlap, radius, dec_key(o.window))
    ctx.log(f"  decoder receptive radius {radius:.2f} frames <= overlap {o.overlap}")
    overlap = GateResult(
        dec_key(o.window), "overlap frames", o.overlap, overlap_for(radius), True
    )
    encoder = ctx.work.npu_onnx_path(
        enc_key(bucket_for(SDP_CHECK_PHONEMES, o.phoneme_buckets))
    )
    with np.load(ctx.sdp_file, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    err = check_port(model, cuts, onnx.load(encoder), arrays)
    ctx.log(f"  numpy SDP vs onnxruntime: max |logw| error {err:.2e}")
    sdp = GateResult("sdp (CPU)", "max |logw| error", err, SDP_TOLERANCE, False)
    return CpuGates((overlap, sdp), round(radius, 2), float(f"{err:.3g}"))
