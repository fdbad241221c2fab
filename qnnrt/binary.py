"""Context-binary metadata via QnnSystemContext, read *before* any context exists.

Everything is deep-copied into frozen dataclasses: the ``BinaryInfo*`` QNN returns
points into memory owned by the system-context handle and dies with it.
"""

from __future__ import annotations

import ctypes as C
import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from .c import _api
from .c._lib import ApiVersion, QnnLibrary, load_library
from .c.errors import check
from .memory.tensor import Quantization, TensorInfo

#: ``graphBlobInfo`` walks: the V1 wrapper is 40 B, a self-versioned V2 struct may
#: follow (observed size 112 = 40 + 72 on QNN 2.51, docs/qnn.md, graph blob info).
_BLOB_V1_SIZE: Final = C.sizeof(_api.QnnHtpSystemContext_GraphBlobInfo_t)
_BLOB_V2_SIZE: Final = C.sizeof(_api.QnnHtpSystemContext_GraphBlobInfoV2_t)


@dataclass(frozen=True)
class GraphInfo:
    """One graph of a context binary."""

    name: str
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    spill_fill_bytes: int = 0
    vtcm_bytes: int = 0
    io_bytes: int | None = None
    const_bytes: int | None = None
    #: weights this graph keeps in the binary's shared section (one copy for
    #: every graph that uses them: ``compile_shared`` on a weight-sharing target)
    shared_weights_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
            "spill_fill_bytes": self.spill_fill_bytes,
            "vtcm_bytes": self.vtcm_bytes,
            "io_bytes": self.io_bytes,
            "const_bytes": self.const_bytes,
            "shared_weights_bytes": self.shared_weights_bytes,
        }


@dataclass(frozen=True)
class BinaryInfo:
    """What a QNN context binary says about itself."""

    path: str
    size: int
    info_version: int
    backend_id: int
    build_id: str
    core_api_version: ApiVersion
    backend_api_version: ApiVersion
    context_blob_version: ApiVersion
    soc_model: int | None
    dsp_arch: int | None
    graphs: tuple[GraphInfo, ...] = field(default_factory=tuple)

    @property
    def shares_weights(self) -> bool:
        """Whether any graph keeps weights in the shared section (the x86
        simulator refuses such a binary: QNN 1000 at contextCreateFromBinary)."""
        return any(g.shared_weights_bytes for g in self.graphs)

    @property
    def spill_fill_bytes(self) -> int:
        """Largest spill-fill buffer any graph of this binary needs."""
        return max((g.spill_fill_bytes for g in self.graphs), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "binary_info_version": self.info_version,
            "backend_id": self.backend_id,
            "build_id": self.build_id,
            "core_api_version": str(self.core_api_version),
            "backend_api_version": str(self.backend_api_version),
            "context_blob_version": str(self.context_blob_version),
            "soc_model": self.soc_model,
            "dsp_arch": self.dsp_arch,
            "spill_fill_bytes": self.spill_fill_bytes,
            "graphs": [g.to_dict() for g in self.graphs],
        }


@contextmanager
def mapped_file(path: str | os.PathLike[str]) -> Iterator[tuple[int, int]]:
    """Read-only mmap of ``path`` as ``(address, size)`` for the duration."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ValueError(f"{os.fspath(path)!r} is empty, not a QNN context binary")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = np.frombuffer(mm, dtype=np.uint8)  # gives a C address for a RO map
        try:
            yield view.ctypes.data, size
        finally:
            del view
            mm.close()


def read_binary_info(
    path: str | os.PathLike[str], lib: QnnLibrary | None = None
) -> BinaryInfo:
    """Parse a context binary's metadata (graphs, tensors, spill-fill)."""
    lib = lib or load_library()
    with mapped_file(path) as (addr, size):
        sysctx = _api.QnnSystemContext_Handle_t()
        check(lib.system("systemContextCreate")(C.byref(sysctx)), "systemContextCreate")
        try:
            info_p = C.POINTER(_api.QnnSystemContext_BinaryInfo_t)()
            info_size = C.c_uint64()
            check(
                lib.system("systemContextGetBinaryInfo")(
                    sysctx, addr, size, C.byref(info_p), C.byref(info_size)
                ),
                "systemContextGetBinaryInfo",
                os.fspath(path),
            )
            return _copy_binary_info(info_p.contents, os.fspath(path), size)
        finally:
            lib.system("systemContextFree")(sysctx)


def _copy_binary_info(
    info: _api.QnnSystemContext_BinaryInfo_t, path: str, size: int
) -> BinaryInfo:
    version = info.version
    if version == _api.QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3:
        b: Any = info.contextBinaryInfoV3
        soc_model = int(b.socModel) or None
        dsp_arch = _dsp_arch(b.contextMetadata, b.contextMetadataSize)
    elif version in (1, 2):
        b = info.contextBinaryInfoV1 if version == 1 else info.contextBinaryInfoV2
        soc_model, dsp_arch = None, None
    else:
        raise ValueError(f"{path!r}: unknown BinaryInfo version {version}")
    graphs = tuple(_copy_graph(b.graphs[i]) for i in range(b.numGraphs))
    return BinaryInfo(
        path=path,
        size=size,
        info_version=version,
        backend_id=b.backendId,
        build_id=(b.buildId or b"").decode(errors="replace"),
        core_api_version=ApiVersion.from_c(b.coreApiVersion),
        backend_api_version=ApiVersion.from_c(b.backendApiVersion),
        context_blob_version=ApiVersion.from_c(b.contextBlobVersion),
        soc_model=soc_model,
        dsp_arch=dsp_arch,
        graphs=graphs,
    )


def _dsp_arch(ptr: int | None, size: int) -> int | None:
    if not ptr or size < C.sizeof(_api.QnnHtpSystemContext_ContextBlobInfo_t):
        return None
    blob = _api.QnnHtpSystemContext_ContextBlobInfo_t.from_address(ptr)
    return int(blob.dspArch) if blob.version == 1 else None


def _copy_graph(g: _api.QnnSystemContext_GraphInfo_t) -> GraphInfo:
    if g.version not in (1, 2, 3):
        raise ValueError(f"unknown GraphInfo version {g.version}")
    v1 = g.graphInfoV1  # V1 is a prefix of V2 and V3
    inputs = tuple(_copy_tensor(v1.graphInputs[i]) for i in range(v1.numGraphInputs))
    outputs = tuple(_copy_tensor(v1.graphOutputs[i]) for i in range(v1.numGraphOutputs))
    extra: dict[str, Any] = {}
    if g.version == 3:
        v3 = g.graphInfoV3
        extra = _parse_blob(v3.graphBlobInfo, v3.graphBlobInfoSize)
    return GraphInfo(
        name=(v1.graphName or b"").decode(), inputs=inputs, outputs=outputs, **extra
    )


def _parse_blob(ptr: int | None, size: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    offset = 0
    while ptr and offset + 4 <= size:
        version = C.c_int32.from_address(ptr + offset).value
        if version == 1 and offset + _BLOB_V1_SIZE <= size:
            v1 = _api.QnnHtpSystemContext_GraphBlobInfo_t.from_address(ptr + offset).v1
            out["spill_fill_bytes"] = int(v1.spillFillBufferSize)
            out["vtcm_bytes"] = int(v1.vtcmSize)
            offset += _BLOB_V1_SIZE
        elif version == 2 and offset + _BLOB_V2_SIZE <= size:
            v2 = _api.QnnHtpSystemContext_GraphBlobInfoV2_t.from_address(ptr + offset)
            out["io_bytes"] = int(v2.ioTensorSize)
            out["const_bytes"] = int(v2.constSize)
            out["shared_weights_bytes"] = int(v2.sharedWeightsSize)
            offset += _BLOB_V2_SIZE
        else:
            break  # unknown or newer struct: keep what we understood
    return out


def _copy_tensor(t: _api.Qnn_Tensor_t) -> TensorInfo:
    if t.version not in (_api.QNN_TENSOR_VERSION_1, _api.QNN_TENSOR_VERSION_2):
        raise ValueError(f"unknown Qnn_Tensor_t version {t.version}")
    v = t.v1  # common prefix of v1 and v2
    shape = tuple(int(v.dimensions[i]) for i in range(v.rank))
    qp = v.quantizeParams
    encoding = _api.QUANT_ENCODING_NAMES.get(qp.quantizationEncoding, "UNDEFINED")
    quant = None
    if (
        qp.encodingDefinition == _api.QNN_DEFINITION_DEFINED
        and qp.quantizationEncoding == _api.QNN_QUANTIZATION_ENCODING_SCALE_OFFSET
    ):
        so = qp.scaleOffsetEncoding
        quant = Quantization(float(so.scale), int(so.offset))
    elif qp.encodingDefinition != _api.QNN_DEFINITION_DEFINED:
        encoding = "UNDEFINED"
    return TensorInfo(
        name=(v.name or b"").decode(),
        id=int(v.id),
        qnn_dtype=int(v.dataType),
        shape=shape,
        quantization=quant,
        encoding=encoding,
    )
