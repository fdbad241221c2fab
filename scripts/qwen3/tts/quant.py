"""The w8a16 code predictor (to meet the real-time bandwidth budget; opt-in: the build's
``--cp-weights w8a16``): cp_step as a QDQ model for the QNN EP.

The code predictor runs 16 times per frame and streams 161.5 MB of fp16
weights per call at full size: 2.6 GB of the 3.6 GB a frame moves
(scripts/bench/qwen3/tts/sizes.py).  Its weights in 8 bits halve that.  The
activations stay 16-bit (the QNN EP's 16-bit-activation / 8-bit-weight mode),
calibrated on the predictor inputs of real prompts: the feeds the engine gives
cp_step, recorded with :class:`FeedRecorder`.

Quantization: onnxruntime.quantization's QNN configuration
(``get_qnn_qdq_config``: the overrides that keep every QDQ node group
HTP-compatible) and ``quantize``: QuantFormat QDQ, MinMax calibration,
activations uint16, weights uint8, per output channel for MatMul weights, per
tensor for the rest.  The stacked heads (a Gather's data input, which
onnxruntime would quantize as a 16-bit activation) are overridden to the weight
type.  Measured on the simulator (QNN 2.51.0, onnxruntime-qnn 2.7.0; the tiny
cp_step, 2 layers): uint16 activations with uint8 or int8 weights compile, and
per-channel MatMul weights; per-channel Gemm weights (the fold fuses o_proj and
down_proj with their residual Add into Gemm), ``per_channel=True`` of
get_qnn_qdq_config and int16 activations fail ("This session contains graph
nodes that are assigned to the default CPU EP, but fallback to CPU EP has been
explicitly disabled by the user").  Teacher-forced top-1 vs CPU fp32 over 90
predictor tokens: fp16 100 %, w8a16 uint8 97.8 % (per-tensor or per-channel),
int8 symmetric 95.6 %.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

#: the QNN EP's w8a16 (onnxruntime QNN EP docs: 16-bit activations, 8-bit weights)
ACTIVATION_TYPE: Final = "QUInt16"
WEIGHT_TYPE: Final = "QUInt8"
#: ONNX elem_type -> numpy dtype of a graph input
PER_CHANNEL_OPS: tuple[str, ...] = ("MatMul",)
_DTYPES: Final = {1: np.float32, 10: np.float16, 6: np.int32, 7: np.int64}


class FeedRecorder:
    """A graph Runner (daemon/sdk/graphs.py) that records what it is fed:
    the feeds of ``run`` and, at every ``execute``, a copy of the arrays bound
    so far.  Wraps the engine's cp_step runner while it speaks real prompts."""

    def __init__(self, runner: Any, limit: int | None = None) -> None:
        self._runner, self._bound = runner, {}
        self.feeds: list[dict[str, np.ndarray]] = []
        self.limit = limit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)

    def _keep(self, feeds: Mapping[str, np.ndarray]) -> None:
        if self.limit is None or len(self.feeds) < self.limit:
            self.feeds.append({k: np.array(v, copy=True) for k, v in feeds.items()})

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        self._keep(feeds)
        return self._runner.run(feeds)

    def bind(self, key: str | int, array: np.ndarray) -> None:
        name = key if isinstance(key, str) else self._runner.inputs[key].name
        if name in {t.name for t in self._runner.inputs}:
            self._bound[name] = array
        self._runner.bind(key, array)

    def execute(self) -> None:
        self._keep(self._bound)
        self._runner.execute()


def input_dtypes(onnx_path: Path) -> dict[str, Any]:
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return {i.name: _DTYPES[i.type.tensor_type.elem_type] for i in model.graph.input}


class _Reader:
    """onnxruntime's CalibrationDataReader over recorded feeds, cast to the
    model's input dtypes (the NPU variant takes fp16 K/V)."""

    def __init__(
        self, feeds: Iterable[Mapping[str, np.ndarray]], dtypes: Mapping[str, Any]
    ) -> None:
        self._it: Iterator[Mapping[str, np.ndarray]] = iter(feeds)
        self._dtypes = dtypes
        self.count = 0

    def get_next(self) -> dict[str, np.ndarray] | None:
        feed = next(self._it, None)
        if feed is None:
            return None
        self.count += 1
        return {k: np.asarray(feed[k], dt) for k, dt in self._dtypes.items()}

    def rewind(self) -> None:  # not used by MinMax; part of the reader protocol
        raise NotImplementedError


def quantize_cp_step(
    onnx_path: str | Path,
    calib: Iterable[Mapping[str, np.ndarray]],
    out: str | Path,
    *,
    weight_type: str = WEIGHT_TYPE,
    per_channel: bool = True,
) -> Path:
    """The w8a16 QDQ model of ``onnx_path`` (cp_step, as exported for the NPU)
    at ``out``, calibrated on ``calib`` (cp_step feeds by input name; at least
    one). Compile it with scripts/common/qnn_compile.py like any graph."""
    from onnxruntime.quantization import CalibrationDataReader, QuantType, quantize
    from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

    src, out = Path(onnx_path), Path(out)
    reader = _Reader(calib, input_dtypes(src))

    class Reader(CalibrationDataReader):  # onnxruntime checks the base class
        def get_next(self) -> dict[str, np.ndarray] | None:
            return reader.get_next()

    config = get_qnn_qdq_config(
        str(src),
        Reader(),
        activation_type=QuantType[ACTIVATION_TYPE],
        weight_type=QuantType[weight_type],
        init_overrides=_overrides(src, QuantType[weight_type], per_channel),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        part = Path(tmp) / out.name
        quantize(str(src), str(part), config)
        if reader.count == 0:
            raise ValueError(f"{src.name}: no calibration feeds")
        shutil.move(str(part), out)  # appears under its name only when complete
    return out


def _overrides(src: Path, weight_type: Any, per_channel: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        name: [{"quant_type": weight_type}] for name in gathered_weights(src)
    }
    if per_channel:  # MatMul/Gemm weights [in, out]: one scale per output column
        out.update(
            (name, [{"quant_type": weight_type, "axis": 1}])
            for name in matmul_weights(src)
        )
    return out


def matmul_weights(onnx_path: Path) -> list[str]:
    """2-D initializers a MatMul or Gemm multiplies by (input 1)."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    inits = {t.name: t for t in model.graph.initializer}
    return sorted(
        {
            n.input[1]
            for n in model.graph.node
            if n.op_type in PER_CHANNEL_OPS
            and n.input[1] in inits
            and len(inits[n.input[1]].dims) == 2
        }
    )


def gathered_weights(onnx_path: Path) -> list[str]:
    """Initializers a Gather reads rows of (cp_step's stacked heads, selected
    by ``head``): weights, though onnxruntime would give them the activation
    type (16 bits) as a Gather's data input."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    return sorted(
        {
            n.input[0]
            for n in model.graph.node
            if n.op_type == "Gather" and n.input[0] in inits
        }
    )


def weight_bytes(onnx_path: str | Path) -> dict[str, int]:
    """Bytes of the model's initializers by element type name (e.g. uint8 for
    quantized weights, float for the rest)."""
    import onnx
    from onnx import TensorProto

    model = onnx.load(str(onnx_path))
    out: dict[str, int] = {}
    for t in model.graph.initializer:
        name = TensorProto.DataType.Name(t.data_type).lower()
        n = int(np.prod(t.dims)) if t.dims else 1
        item = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
        out[name] = out.get(name, 0) + n * item
    return out
