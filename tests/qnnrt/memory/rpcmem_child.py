"""Child process for test_rpcmem: rpcmem buffers from the compiled libcdsprpc stub.

usage: rpcmem_child.py BIN MODE   (MODE: exit | drop)

Runs with LD_LIBRARY_PATH at the stub, so qnnrt loads it as it loads the board's
library.  Two rpcmem buffers are taken before the first context (the memory mode is
decided with that context); one is bound as the graph's input.  The simulator
refuses QnnMem (1000, docs/qnn.md), so no real handle can exist here: the child
records one the way ``Graph._point`` records a successful ``memRegister``, with a
value QNN never issued, and the log shows when qnnrt deregisters it.

exit: print the state as JSON and exit with everything open (atexit tears down).
drop: drop the registered buffer's array, then allocate the same size again.
"""

from __future__ import annotations

import gc
import json
import logging
import sys

import numpy as np

import qnnrt

#: A handle value QNN never hands out (its handles are small integers).
UNISSUED_HANDLE = 0x7E57
#: What a service holds for its whole life (engines keep their buffers).
_KEEP: list[object] = []


def main() -> None:
    path, mode = sys.argv[1], sys.argv[2]
    logging.basicConfig(
        level=logging.DEBUG, stream=sys.stderr, format="%(name)s: %(message)s"
    )
    be = qnnrt.Backend(log_level="debug")
    x = be.empty((1, 64), np.float32)
    spare = be.empty((1, 64), np.float32)
    ctx = qnnrt.Context.open(be, path)
    graph = ctx.graph()
    graph.bind("x", x)
    graph.bind("y", be.empty((1, 64), np.float32))
    rpc = be.rpcmem
    state = {"memory": be.memory.kind, "reason": be.memory.reason}
    assert rpc is not None, state
    reg = rpc.zeros((1, 64), np.dtype(np.float32))
    allocation, _ = rpc.locate(reg)
    ctx._adopt_mem_handle(UNISSUED_HANDLE, allocation)
    graph._mem_handles[(reg.ctypes.data, reg.nbytes)] = UNISSUED_HANDLE
    state.update(
        x=hex(x.ctypes.data), spare=hex(spare.ctypes.data), reg=hex(reg.ctypes.data)
    )
    state["result"] = float(graph.run({"x": np.ones((1, 64), np.float32)})[0].sum())
    if mode == "drop":
        del reg
        gc.collect()
        state["cache_after_free"] = len(graph._mem_handles)
        state["context_handles_after_free"] = len(ctx._mem_handles)
        again = rpc.zeros((1, 64), np.dtype(np.float32))
        state["again"] = hex(again.ctypes.data)
        state["again_cached"] = (again.ctypes.data, again.nbytes) in graph._mem_handles
    _KEEP.extend([be, ctx, graph, x, spare])
    if mode == "exit":
        _KEEP.append(reg)
    print("STATE", json.dumps(state), flush=True)
    sys.stderr.write("CHILD DONE\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
