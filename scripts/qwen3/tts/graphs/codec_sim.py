"""The codec windows on the HTP simulator: every compiled size, and the fp16
range of every tensor in them.

Why every size: the HTP simulator has computed a long op of one static shape
wrongly while shorter ones were right (the HuBERT Conv1d from output frame
3584 on, scripts/gptsovits/models/hubert.py), so the smallest window passing says
nothing of the others.  A window runs whole, fed codes in all its frames so
every op sees data: no cheaper sub-graph covers its long layers, since the
last upsampling block at the full sample length is itself three quarters of
a call (tiny codec, 8 frames: 30 of 40 s), and a length fault is there.

Why the range check: fp16 holds magnitudes up to 65504, and the HTP runs the
graphs in fp16.  A codec whose codebook usage is near zero has rows of
embedding_sum / 1e-5 (3e5 in the ill-conditioned test codec); unscaled, that
table was inf on the HTP and the window's wav was -5.7 dB against the CPU
backend, from the lookup on (codec.py rescales it).  The check reads every
initializer and every intermediate tensor of the fp32 graph on the CPU (a
fraction of a second per window) and names the largest, so a model that
leaves fp16 fails the build with the tensor named instead of a simulator
SNR.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import numpy as np

from scripts.common.gate_result import GateResult
from scripts.common.parity import snr_db
from scripts.common.sim_gate import sim_gate
from scripts.qwen3.tts.graphs import codec as codec_graph
from scripts.qwen3.tts.windows import test_codes

#: the largest finite fp16 magnitude (IEEE 754 binary16)
FP16_MAX: Final = 65504.0
#: a tensor may use this share of fp16's range: sums and products the HTP
#: forms inside one op (a conv's accumulation, SnakeBeta's x·a) reach a few
#: times the largest stored tensor
MAX_FP16_SHARE: Final = 1.0 / 16
#: Tensors one range-check run keeps: with every intermediate of a full-size
#: 325-frame codec window at once a run would hold over 10 GB (estimated from
#: the tiny codec_325: 1.2 GB for all of its tensors), so they are read in
#: batches, each run keeping only its own.
OUTPUTS_PER_RUN: Final = 48
#: simulator vs the CPU backend on one whole window: fp16 gives 41-43 dB on
#: the tiny codecs (windows 8-40, plain and ill-conditioned); the faults seen
#: (an inf table, Pow(sin, 2)) gave 4 dB and less
SIM_MIN_SNR_DB: Final = 30.0

Runner = Any


def codes_for(window: Runner, codebook: int) -> np.ndarray:
    """Fixed test codes [1, G, T] filling every frame of ``window``."""
    _, groups, frames = next(t.shape for t in window.inputs if t.name == "codes")
    return test_codes(codebook, frames, groups).astype(np.int32)[None]


def sim_codec_gate(sim: Runner, cpu: Runner, codebook: int) -> list[GateResult]:
    """One compiled window against its fp32 graph on the CPU backend: cosine
    (the simulator gates' bound) and SNR of the whole window's samples."""
    feeds = {"codes": codes_for(cpu, codebook)}
    got, ref = (np.asarray(r.run(feeds)[r.output_index["wav"]]) for r in (sim, cpu))
    name = f"codec_{feeds['codes'].shape[2]}"
    snr = GateResult(
        name,
        "simulator SNR dB (whole window)",
        snr_db(reference=ref, test=got),
        SIM_MIN_SNR_DB,
        True,
    )
    return [*sim_gate(name, [ref], [got], False), snr]


def sim_codec_gates(
    windows: Iterable[tuple[str, Runner, Runner]], codebook: int
) -> dict[str, list[GateResult]]:
    """Every (key, simulator runner, CPU runner) window, smallest first."""
    return {key: sim_codec_gate(sim, cpu, codebook) for key, sim, cpu in windows}


def fp16_range_gate(onnx_path: Path, codebook: int) -> GateResult:
    """The largest |value| of any initializer or intermediate tensor of the
    fp32 graph at ``onnx_path`` on the test codes, as a share of FP16_MAX;
    the metric names the tensor."""
    name, big = largest_tensor(onnx_path, codebook)
    return GateResult(
        Path(onnx_path).stem,
        f"fp16 range share (largest: {name})",
        big / FP16_MAX,
        MAX_FP16_SHARE,
        False,
    )


def largest_tensor(onnx_path: Path, codebook: int) -> tuple[str, float]:
    """(name, max |value|) over the graph's float initializers, Constant
    nodes and every node output on the test codes, the attention mask and
    its sums left out."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.type == onnx.AttributeProto.TENSOR:
                consts[node.output[0]] = numpy_helper.to_array(attr.t)
    masks = {k for k, v in consts.items() if _is_mask(v)}
    # the mask's sums with the scores: -1e4 by design, exact zeros after softmax
    masks |= {o for n in model.graph.node if masks & set(n.input) for o in n.output}
    sizes: dict[str, float] = {}
    for name, value in consts.items():
        _keep(sizes, name, value)
    outputs = _all_outputs(model)
    for start in range(0, len(outputs), OUTPUTS_PER_RUN):
        some = outputs[start : start + OUTPUTS_PER_RUN]
        for name, value in zip(some, _run_all(model, some, codebook), strict=True):
            _keep(sizes, name, value)
    name = max(sizes.keys() - masks, key=sizes.__getitem__)
    return name, sizes[name]


def _is_mask(value: np.ndarray) -> bool:
    """codec.py's additive attention mask: only 0 and MASKED."""
    return bool(
        np.issubdtype(value.dtype, np.floating)
        and value.ndim >= 2
        and np.isin(value, (0.0, codec_graph.MASKED)).all()
        and (value == codec_graph.MASKED).any()
    )


def _keep(sizes: dict[str, float], name: str, value: np.ndarray) -> None:
    if np.issubdtype(value.dtype, np.floating) and value.size:
        sizes[name] = float(np.max(np.abs(value.astype(np.float64))))


def _all_outputs(model: Any) -> list[str]:
    seen = {o.name for o in model.graph.output}
    names = [o.name for o in model.graph.output]
    for node in model.graph.node:
        names += [o for o in node.output if o and o not in seen]
        seen.update(node.output)
    return names


def _run_all(model: Any, outputs: list[str], codebook: int) -> list[np.ndarray]:
    """The tensors ``outputs`` of ``model`` on the test codes (onnxruntime CPU);
    only those are kept, so a run holds a bounded share of the graph's tensors."""
    import onnx
    import onnxruntime as ort

    graph_outputs = {o.name for o in model.graph.output}
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    for name in outputs:
        if name not in graph_outputs:
            wide.graph.output.append(onnx.ValueInfoProto(name=name))
    session = ort.InferenceSession(
        wide.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (spec,) = session.get_inputs()
    _, groups, frames = spec.shape
    codes = test_codes(codebook, frames, groups).astype(np.int32)[None]
    return [np.asarray(v) for v in session.run(outputs, {spec.name: codes})]


def fp16_range_gates(
    paths: Iterable[Path], codebook: int, log: Callable[[str], None] | None = None
) -> dict[str, GateResult]:
    """fp16_range_gate of every window graph, by graph stem."""
    out = {}
    for path in paths:
        out[Path(path).stem] = res = fp16_range_gate(path, codebook)
        if log is not None:
            log(str(res))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m scripts.qwen3.tts.graphs.codec_sim CODEBOOK codec_T.onnx...``:
    the fp16 range gate of built window graphs (a bundle's onnx/), exit 1 on
    a failure."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        print("usage: codec_sim CODEBOOK codec_T.onnx...", file=sys.stderr)
        return 2
    gates = fp16_range_gates([Path(p) for p in args[1:]], int(args[0]), print)
    return 0 if all(g.passed for g in gates.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
