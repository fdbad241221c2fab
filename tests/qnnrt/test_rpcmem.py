"""rpcmem selection: chosen only when libcdsprpc loads and QNN takes mem handles."""

from __future__ import annotations

import numpy as np
import pytest

from qnnrt import _api as A
from qnnrt.rpcmem import RpcMem, choose_memory


def test_x86_simulator_uses_host_memory_and_says_why(backend):
    assert RpcMem.available() is False  # no libcdsprpc.so off the board
    assert backend.memory.kind == "host"
    assert "libcdsprpc.so does not load" in backend.memory.reason
    arr = backend.empty((2, 3), np.float16)
    assert arr.dtype == np.float16 and not arr.any()


def test_real_capabilities_of_the_simulator(backend):
    lib = backend.lib
    assert lib.has_capability(A.QNN_PROPERTY_MEM_TYPE_ION) is True
    assert lib.has_capability(A.QNN_PROPERTY_TENSOR_SUPPORT_MEMHANDLE_TYPE) is False


@pytest.mark.parametrize(
    "loads,ion,memhandle,kind",
    [
        (True, True, True, "rpcmem"),
        (False, True, True, "host"),
        (True, False, True, "host"),
        (True, True, False, "host"),
    ],
)
def test_auto_selection(loads, ion, memhandle, kind):
    choice = choose_memory(
        "auto", rpcmem_loads=loads, ion_supported=ion, memhandle_tensors=memhandle
    )
    assert choice.kind == kind


def test_forced_rpcmem_without_support_is_an_error():
    with pytest.raises(RuntimeError, match="libcdsprpc.so does not load"):
        choose_memory(
            "rpcmem", rpcmem_loads=False, ion_supported=True, memhandle_tensors=True
        )
    assert (
        choose_memory(
            "host", rpcmem_loads=True, ion_supported=True, memhandle_tensors=True
        ).kind
        == "host"
    )
    with pytest.raises(ValueError):
        choose_memory(
            "ion", rpcmem_loads=True, ion_supported=True, memhandle_tensors=True
        )


@pytest.mark.board
def test_rpcmem_buffers_are_registered_as_mem_handles(bins):  # pragma: no cover
    import qnnrt

    with qnnrt.Backend(memory="rpcmem") as be:
        graph = be.load(bins["kv_decode"].bin_path).graph()
        k = be.empty(graph.inputs[1].shape, np.float16)
        graph.bind("k_cache", k)
        assert graph._in_v1[1].memType == A.QNN_TENSORMEMTYPE_MEMHANDLE
