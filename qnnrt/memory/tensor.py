"""Tensor metadata and the numpy <-> QNN dtype rules.

QNN's ``graphExecute`` checks neither dtype nor byte size (an undersized buffer is a
silent overflow, docs/qnn.md, execute tensor rules), so every array is validated here
before its pointer reaches C.
"""

from __future__ import annotations

import ctypes as C
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from ..c import _api

#: Plain (unquantized) QNN data types and their numpy dtype.
PLAIN_DTYPES: Final[Mapping[int, np.dtype]] = {
    _api.QNN_DATATYPE_FLOAT_32: np.dtype(np.float32),
    _api.QNN_DATATYPE_FLOAT_16: np.dtype(np.float16),
    _api.QNN_DATATYPE_INT_32: np.dtype(np.int32),
    _api.QNN_DATATYPE_UINT_32: np.dtype(np.uint32),
    _api.QNN_DATATYPE_INT_16: np.dtype(np.int16),
    _api.QNN_DATATYPE_UINT_16: np.dtype(np.uint16),
    _api.QNN_DATATYPE_INT_8: np.dtype(np.int8),
    _api.QNN_DATATYPE_UINT_8: np.dtype(np.uint8),
    _api.QNN_DATATYPE_BOOL_8: np.dtype(np.bool_),
}

#: Fixed-point (scale/offset quantized) types and the numpy dtype of their storage.
QUANTIZED_DTYPES: Final[Mapping[int, np.dtype]] = {
    _api.QNN_DATATYPE_UFIXED_POINT_8: np.dtype(np.uint8),
    _api.QNN_DATATYPE_SFIXED_POINT_8: np.dtype(np.int8),
    _api.QNN_DATATYPE_UFIXED_POINT_16: np.dtype(np.uint16),
    _api.QNN_DATATYPE_SFIXED_POINT_16: np.dtype(np.int16),
}

#: QNN HTP has no 64-bit integers; an int64 array is always a caller bug.
_REFUSED_NUMPY: Final = {np.dtype(np.int64), np.dtype(np.uint64)}


@dataclass(frozen=True)
class Quantization:
    """Scalar scale/offset encoding: ``real = scale * (q + offset)``.

    QNN's ``offset`` is the *negative* ONNX zero point (uint8 zp 128 → -128).
    """

    scale: float
    offset: int

    def quantize(self, x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        info = np.iinfo(dtype)
        q = np.rint(np.asarray(x, np.float32) / np.float32(self.scale)) - self.offset
        return np.clip(q, info.min, info.max).astype(dtype)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        return (q.astype(np.float32) + np.float32(self.offset)) * np.float32(self.scale)


@dataclass(frozen=True)
class TensorInfo:
    """One graph input or output as the context binary describes it."""

    name: str
    id: int
    qnn_dtype: int
    shape: tuple[int, ...]
    quantization: Quantization | None = None
    encoding: str = "UNDEFINED"

    @property
    def dtype_name(self) -> str:
        return _api.DATATYPE_NAMES.get(self.qnn_dtype, hex(self.qnn_dtype))

    @property
    def native_dtype(self) -> np.dtype | None:
        """numpy dtype of the bytes QNN reads/writes, or None if unsupported."""
        return PLAIN_DTYPES.get(self.qnn_dtype) or QUANTIZED_DTYPES.get(self.qnn_dtype)

    @property
    def is_quantized(self) -> bool:
        return self.qnn_dtype in QUANTIZED_DTYPES

    @property
    def nbytes(self) -> int:
        dt = self.native_dtype
        return int(np.prod(self.shape, dtype=np.int64)) * (dt.itemsize if dt else 0)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "id": self.id,
            "dtype": self.dtype_name,
            "numpy": str(self.native_dtype) if self.native_dtype else None,
            "shape": list(self.shape),
            "encoding": self.encoding,
        }
        if self.quantization:
            d["scale"] = self.quantization.scale
            d["offset"] = self.quantization.offset
        return d


def require_supported(info: TensorInfo, graph: str) -> np.dtype:
    """The native numpy dtype of ``info``, or a clear ``TypeError``."""
    dt = info.native_dtype
    if dt is None:
        hint = (
            " (QNN HTP has no 64-bit integers: re-export the model with int32)"
            if info.qnn_dtype in (_api.QNN_DATATYPE_INT_64, _api.QNN_DATATYPE_UINT_64)
            else ""
        )
        raise TypeError(
            f"graph {graph!r} tensor {info.name!r} has QNN dtype {info.dtype_name}, "
            f"which qnnrt does not support{hint}"
        )
    if info.is_quantized and info.quantization is None:
        raise TypeError(
            f"graph {graph!r} tensor {info.name!r} is {info.dtype_name} with "
            f"{info.encoding} encoding; only scalar scale/offset is supported"
        )
    return dt


def check_array(
    info: TensorInfo, array: Any, *, what: str, writable: bool = False
) -> np.ndarray:
    """Validate ``array`` as the exact native buffer for ``info``.

    Returns the array itself (never a copy): its pointer goes to C as is.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(
            f"{what} {info.name!r}: expected a numpy array, got {type(array).__name__}"
        )
    want = info.native_dtype
    if array.dtype in _REFUSED_NUMPY:
        raise TypeError(
            f"{what} {info.name!r}: {array.dtype} arrays are not accepted (QNN HTP "
            f"has no 64-bit integers); pass {want}"
        )
    if array.dtype != want:
        raise TypeError(f"{what} {info.name!r}: dtype {array.dtype}, expected {want}")
    if array.shape != info.shape:
        raise ValueError(
            f"{what} {info.name!r}: shape {array.shape}, expected {info.shape}"
        )
    if not array.flags.c_contiguous or not array.flags.aligned:
        raise ValueError(
            f"{what} {info.name!r}: array must be C-contiguous and aligned "
            f"(use np.ascontiguousarray)"
        )
    if writable and not array.flags.writeable:
        raise ValueError(f"{what} {info.name!r}: array is read-only")
    if array.nbytes != info.nbytes:  # belt and braces: a wrong size overflows in C
        raise ValueError(
            f"{what} {info.name!r}: {array.nbytes} bytes, expected {info.nbytes}"
        )
    return array


def to_native(info: TensorInfo, array: Any, *, what: str) -> np.ndarray:
    """Input conversion for ``Graph.run``: float data → quantized storage when the
    tensor is fixed-point; everything else must already be the exact dtype."""
    if (
        info.is_quantized
        and isinstance(array, np.ndarray)
        and array.dtype.kind == "f"
        and array.shape == info.shape
    ):
        assert info.quantization is not None and info.native_dtype is not None
        return info.quantization.quantize(array, info.native_dtype)
    return check_array(info, array, what=what)


def check_feeds(
    graph: str,
    inputs: tuple[TensorInfo, ...],
    given: Mapping[str, Any],
    bound: Collection[str],
) -> None:
    """``Graph.run``'s inputs by name: none unknown, none missing (but ``bound``)."""
    names = [t.name for t in inputs]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(
            f"graph {graph!r}: unknown input(s) {unknown}; expected {names}"
        )
    missing = [n for n in names if n not in given and n not in bound]
    if missing:
        raise ValueError(
            f"graph {graph!r}: missing input(s) {missing}; expected {names}"
        )


def unbound_error(
    graph: str,
    inputs: Iterable[tuple[TensorInfo, Any]],
    outputs: Iterable[tuple[TensorInfo, Any]],
) -> ValueError:
    """``Graph.execute`` with a tensor unbound: which (pairs of info, bound array)."""
    missing = [t.name for t, b in inputs if b is None]
    missing += [
        f"output {i} ({t.name})" for i, (t, b) in enumerate(outputs) if b is None
    ]
    return ValueError(
        f"graph {graph!r}: execute() needs every tensor bound; unbound: "
        f"{missing} (use bind(), or run() to pass arrays per call)"
    )


def tensor_structs(infos: tuple[TensorInfo, ...], ttype: int, keep: list[Any]) -> Any:
    """A ``Qnn_Tensor_t`` array (v1) describing ``infos``, no buffers yet.

    The names and dims it points into go into ``keep``: they must live as long
    as the array is handed to ``graphExecute``.
    """
    arr = (_api.Qnn_Tensor_t * len(infos))()
    for t, info in zip(arr, infos):
        t.version = _api.QNN_TENSOR_VERSION_1
        v = t.v1
        v.id = info.id
        name = info.name.encode()
        dims = (C.c_uint32 * len(info.shape))(*info.shape)
        keep += [name, dims]
        v.name = name
        v.type = ttype
        v.dataFormat = _api.QNN_TENSOR_DATA_FORMAT_DENSE
        v.dataType = info.qnn_dtype
        qp = v.quantizeParams
        qp.encodingDefinition = _api.QNN_DEFINITION_UNDEFINED
        qp.quantizationEncoding = _api.QNN_QUANTIZATION_ENCODING_UNDEFINED
        if info.quantization is not None:
            qp.encodingDefinition = _api.QNN_DEFINITION_DEFINED
            qp.quantizationEncoding = _api.QNN_QUANTIZATION_ENCODING_SCALE_OFFSET
            qp.scaleOffsetEncoding.scale = info.quantization.scale
            qp.scaleOffsetEncoding.offset = info.quantization.offset
        v.rank = len(info.shape)
        v.dimensions = dims
        v.memType = _api.QNN_TENSORMEMTYPE_RAW
        v.clientBuf.data = None
        v.clientBuf.dataSize = info.nbytes
    return arr
