"""Piper's NPU path on onnxruntime's CPU provider, for the benchmarks.

The joe demo voice's own static graphs (the ONNX the converter compiles for
the HTP; the binaries have the same I/O) behind the engine's CpuRunner, and the
voice parameters scripts/piper/convert.py would write for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
import onnxruntime as ort

from daemon.engines.piper.cpu import DurationPredictor
from daemon.engines.piper.params import PiperParams
from daemon.sdk.bundles.manifest import TensorSpec
from daemon.sdk.graphs import CpuRunner
from scripts.piper import graphs
from scripts.piper.convert import ConvertOptions, read_config
from scripts.piper.cuts import find_cuts
from scripts.piper.oracle import default_voice
from scripts.piper.sdp_export import sdp_weights


@dataclass(frozen=True)
class Voice:
    """The demo voice's whole-model ONNX and where the converter cuts it."""

    path: Path
    model: onnx.ModelProto
    cuts: Any
    hop: int
    channels: int


def demo_voice() -> Voice:
    path = default_voice()
    model = onnx.load(path)
    return Voice(
        path, model, find_cuts(model), graphs.hop_length(model), graphs.channels(model)
    )


class _Spec:
    """The float32 inputs and outputs a CpuRunner checks the session against."""

    def __init__(self, inputs: tuple, outputs: tuple) -> None:
        self.inputs, self.outputs = inputs, outputs


def cpu_runner(key: str, graph: onnx.ModelProto | Path) -> CpuRunner:
    """``graph`` (in memory or a file) on onnxruntime's CPU provider."""
    source = (
        graph.SerializeToString() if isinstance(graph, onnx.ModelProto) else str(graph)
    )
    sess = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    spec = _Spec(
        *(
            tuple(TensorSpec(a.name, "float32", tuple(a.shape)) for a in group)
            for group in (sess.get_inputs(), sess.get_outputs())
        )
    )
    return CpuRunner(key, sess, spec)


def params(voice: Voice, opts: ConvertOptions, flow_context: int) -> PiperParams:
    """The voice parameters of a bundle built with ``opts`` (no vowel
    clusters, the SDP on the host: ``sdp`` names no file)."""
    config = read_config(voice.path)
    inference = config.get("inference", {})
    return PiperParams(
        phoneme_type=config.get("phoneme_type", "espeak"),
        espeak_voice=config["espeak"]["voice"],
        phoneme_id_map={k: tuple(v) for k, v in config["phoneme_id_map"].items()},
        vowel_clusters=(),
        noise_scale=float(inference.get("noise_scale", 0.667)),
        length_scale=float(inference.get("length_scale", 1.0)),
        noise_w=float(inference.get("noise_w", 0.8)),
        hop=voice.hop,
        channels=voice.channels,
        phoneme_buckets=opts.phoneme_buckets,
        frame_buckets=opts.frame_buckets,
        flow_context=flow_context,
        window=opts.window,
        overlap=opts.overlap,
        sdp="",
    )


def duration_predictor(voice: Voice) -> DurationPredictor:
    """The numpy SDP port the engine runs on the host."""
    return DurationPredictor.from_arrays(sdp_weights(voice.model))


def graph_seconds(runners: Mapping[str, CpuRunner]) -> float:
    """Seconds spent inside graph calls so far, over all ``runners``."""
    return sum(r.stats.seconds for r in runners.values())
