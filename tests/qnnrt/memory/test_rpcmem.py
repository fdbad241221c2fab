"""rpcmem: decided by trying, owned by the Backend, deregistered before it is freed.

Off the board, a tiny libcdsprpc.so compiled here (tests/qnnrt/cdsprpc_stub.py)
takes the board library's place; it logs every call on stderr, in order with the
child's own log lines, so the tests read the real sequence of calls.  Those tests
assert the simulator's answers (QnnMem: 1000) and are marked ``simulator``; the
``board`` tests at the end run the same paths for real on a QCS8550.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qnnrt
from qnnrt.c import _api as A
from qnnrt.memory.rpcmem import RpcMem, open_memory
from tests.qnnrt.cdsprpc_stub import calls

ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("rpcmem_child.py")


def _run(args: list[str], lib_dir: Path, **env: str) -> subprocess.CompletedProcess:
    child_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LD_LIBRARY_PATH": str(lib_dir),
        **env,
    }
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env,
        timeout=120,
    )


def _child(bins, cdsprpc_dir: Path, mode: str) -> tuple[dict, list[str]]:
    proc = _run([str(CHILD), str(bins["matmul_tanh"].bin_path), mode], cdsprpc_dir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # QNN prints its refusal to deregister on stdout too: find our line.
    (state,) = [ln[6:] for ln in proc.stdout.splitlines() if ln.startswith("STATE ")]
    return json.loads(state), proc.stderr.splitlines()


def _first(lines: list[str], needle: str, start: int = 0) -> int:
    return next(i for i, line in enumerate(lines) if i >= start and needle in line)


def _frees(lines: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if "rpcmem_stub: free " in line:
            out.setdefault(line.split()[-1], []).append(i)
    return out


# ---------------------------------------------------------------- item 8: order
@pytest.mark.simulator
def test_exit_with_live_buffers_deregisters_then_frees_after_the_context(
    bins, cdsprpc_dir
):
    state, lines = _child(bins, cdsprpc_dir, "exit")
    done = _first(lines, "CHILD DONE")
    ctx_free = _first(lines, "QnnContext_free started", done)
    dereg = _first(lines, "memDeRegister 1 handle(s) of ", done)
    backend_free = _first(lines, "QnnBackend_free started", done)
    frees = _frees(lines)
    live = [state["x"], state["spare"], state["reg"]]
    # Each buffer freed once, at exit, after its handle is deregistered and the
    # context is gone, before the backend; weakref's own atexit never ran.
    for ptr in live:
        (at,) = [i for i in frees[ptr] if i > done]
        assert dereg < ctx_free < at < backend_free, (ptr, lines[done:])
    assert _first(lines, "rpcmem_stub: deinit", done) > max(frees[p][-1] for p in live)


@pytest.mark.simulator
def test_dropping_a_registered_buffer_deregisters_it_and_clears_the_cache(
    bins, cdsprpc_dir
):
    state, lines = _child(bins, cdsprpc_dir, "drop")
    done = _first(lines, "CHILD DONE")
    dereg = _first(lines, "memDeRegister 1 handle(s) of ")
    # The allocator reuses addresses (the probe's before, "again" after): take
    # the free that ends this very allocation.
    born = max(i for i in range(dereg) if lines[i].endswith(f"-> {state['reg']}"))
    freed = min(i for i in _frees(lines)[state["reg"]] if i > born)
    assert born < dereg < freed < done
    assert state["cache_after_free"] == 0
    assert state["context_handles_after_free"] == 0
    assert state["again_cached"] is False  # a new buffer never gets the old handle


# ---------------------------------------------------------------- item 9: decide
@pytest.mark.simulator
def test_registration_decides_and_falls_back_with_one_line(bins, cdsprpc_dir):
    state, lines = _child(bins, cdsprpc_dir, "exit")
    assert state["memory"] == "host"
    assert state["reason"].startswith("memRegister of a 4096-byte libcdsprpc.so")
    assert "QNN_COMMON_ERROR_NOT_SUPPORTED (1000)" in state["reason"]
    assert "QnnMem API is not supported" in state["reason"]
    done = _first(lines, "CHILD DONE")
    said = [line for line in lines[:done] if "QNN memory" in line]
    assert said == [f"qnnrt.backend: QNN memory: host ({state['reason']})"]
    assert not [line for line in lines[:done] if "<E>" in line]  # folded into it
    # The probe buffer was allocated, offered to QNN and freed.
    probe = [c for c in calls("\n".join(lines[:done])) if "size=4096" in c[1]]
    assert len(probe) == 2  # once to check the allocator, once to register


_BACKEND = (
    "import json, qnnrt\n"
    "with qnnrt.Backend() as be:\n"
    "    print(json.dumps([be.memory.kind, be.memory.reason]))\n"
)


@pytest.mark.simulator
def test_an_fd_of_minus_one_falls_back_and_frees_the_buffer(cdsprpc_dir):
    proc = _run(["-c", _BACKEND], cdsprpc_dir, RPCMEM_STUB_NO_FD="1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, reason = json.loads(proc.stdout)
    assert kind == "host" and "rpcmem_to_fd returned -1" in reason
    seq = [c for c, _ in calls(proc.stderr)]
    assert seq == ["init", "alloc", "to_fd", "free", "deinit"]


@pytest.mark.simulator
def test_the_versioned_library_name_is_tried_too(bins, cdsprpc_dir, tmp_path):
    shutil.copyfile(cdsprpc_dir / "libcdsprpc.so", tmp_path / "libcdsprpc.so.1")
    load = f"    qnnrt.Context.open(be, {str(bins['matmul_tanh'].bin_path)!r})\n"
    head, tail = _BACKEND.split("\n", 2)[:2], _BACKEND.split("\n", 2)[2]
    code = "\n".join(head) + "\n" + load + tail
    proc = _run(["-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kind, reason = json.loads(proc.stdout)
    assert kind == "host" and "libcdsprpc.so.1 buffer failed" in reason


@pytest.mark.simulator
def test_forced_rpcmem_fails_loudly_when_registration_fails(bins, cdsprpc_dir):
    code = (
        "import qnnrt\n"
        "be = qnnrt.Backend(memory='rpcmem')\n"
        "try:\n"
        f"    qnnrt.Context.open(be, {str(bins['matmul_tanh'].bin_path)!r})\n"
        "except qnnrt.QnnError as e:\n"
        "    print(e.call, e.code)\n"
        "print(be.rpcmem.live)\n"
        "be.close()\n"
    )
    proc = _run(["-c", code], cdsprpc_dir)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["memRegister", "1000", "0"]


@pytest.mark.simulator
def test_x86_simulator_uses_host_memory_and_says_why(backend):
    with pytest.raises(OSError, match="libcdsprpc.so / libcdsprpc.so.1 does not load"):
        RpcMem.load()
    assert backend.memory.kind == "host"
    assert "does not load" in backend.memory.reason
    arr = backend.empty((2, 3), np.float16)
    assert arr.dtype == np.float16 and not arr.any()


@pytest.mark.simulator
def test_capabilities_are_not_what_decides(backend):
    # The simulator says MEMHANDLE tensors are unsupported (1000); onnxruntime and
    # ExecuTorch never ask, and neither does qnnrt any more.
    lib = backend.lib
    assert lib.has_capability(A.QNN_PROPERTY_TENSOR_SUPPORT_MEMHANDLE_TYPE) is False


@pytest.mark.simulator
def test_memory_choices():
    assert open_memory("host")[1].reason == "requested"
    with pytest.raises(ValueError, match="expected one of"):
        open_memory("ion")
    with pytest.raises(OSError, match="does not load"):
        open_memory("rpcmem")


# ---------------------------------------------------------------- on a board
@pytest.mark.board
def test_rpcmem_graph_executes_and_tears_down(board_bins):  # pragma: no cover
    path = board_bins["matmul_tanh"]
    x = np.random.default_rng(0).standard_normal((1, 64)).astype(np.float32)
    with qnnrt.Backend(memory="host") as host:
        want = host.load(path).graph().run({"x": x})[0].copy()
    with qnnrt.Backend(memory="rpcmem") as be:
        ctx = qnnrt.Context.open(be, path)
        assert be.memory.kind == "rpcmem" and be.memory.confirmed, be.memory
        graph = ctx.graph()
        xin, y = be.empty((1, 64), np.float32), be.empty((1, 64), np.float32)
        xin[...] = x
        graph.bind("x", xin)
        graph.bind(0, y)
        assert graph._in_v1[0].memType == A.QNN_TENSORMEMTYPE_MEMHANDLE
        assert graph._out_v1[0].memType == A.QNN_TENSORMEMTYPE_MEMHANDLE
        graph.execute()
        np.testing.assert_allclose(y, want, rtol=0, atol=0)  # same NPU, same bits
        ctx.close()  # deregisters both handles; the buffers stay until be.close()
        assert be.rpcmem.live == 2 and not ctx._mem_handles
    assert be.rpcmem.live == 0


_BOARD_EXIT = """
import logging, sys
import numpy as np
import qnnrt
logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
be = qnnrt.Backend(memory="rpcmem", log_level="debug")
graph = qnnrt.Context.open(be, sys.argv[1]).graph()
x, y = be.empty((1, 64), np.float32), be.empty((1, 64), np.float32)
graph.bind("x", x)
graph.bind(0, y)
graph.execute()
KEEP = [be, graph, x, y]
sys.stderr.write("CHILD DONE\\n")
"""


@pytest.mark.board
def test_exit_with_registered_buffers_is_clean(board_bins):  # pragma: no cover
    proc = subprocess.run(
        [sys.executable, "-c", _BOARD_EXIT, str(board_bins["matmul_tanh"])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    done = _first(lines, "CHILD DONE")
    dereg = _first(lines, "memDeRegister 2 handle(s) of ", done)
    assert dereg < _first(lines, "QnnContext_free started", done)
    assert _first(lines, "QnnBackend_free started", done) > dereg
