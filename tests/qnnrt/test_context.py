"""Contexts, groups, teardown order, use-after-close and forks on the simulator."""

from __future__ import annotations

import gc
import logging
import os
import weakref
from pathlib import Path

import numpy as np
import pytest

import qnnrt


@pytest.mark.simulator
def test_group_of_three_falls_back_to_standalone_and_says_so(backend, bins, caplog):
    paths = [bins[n].bin_path for n in ("matmul_tanh", "multi_io", "kv_decode")]
    # ORT-made binaries report 0 spill-fill; force a size so a group is attempted
    # (as for binaries from SDKs < 2.35, which always report 0).
    with caplog.at_level(logging.DEBUG, logger="qnnrt"):
        group = qnnrt.ContextGroup.open(backend, paths, spill_fill_bytes=1 << 20)
    assert group.shared_spill_fill is False
    assert (
        group.status == "standalone (the HTP simulator has no shared spill-fill groups)"
    )
    # The simulator's expected refusal: one INFO line with no alarming QNN code,
    # not five QNN ERROR lines; the code and QNN's own cause are in the debug log.
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert info == [f"loaded 3 context(s): {group.status}"], info
    (cause,) = [r for r in caplog.records if "group refused" in r.getMessage()]
    assert (cause.name, cause.levelno) == ("qnnrt.group", logging.DEBUG)
    assert "5010" in cause.getMessage()
    assert "Config option: 2 not supported" in cause.getMessage()  # QNN's own cause
    assert len(group.contexts) == 3 and len(group.graphs) == 3
    x = np.ones((1, 64), np.float32)
    assert group.contexts[0].graph().run({"x": x})[0].shape == (1, 64)
    group.close()
    assert all(c.closed for c in group.contexts)


@pytest.mark.parametrize("spill_fill", [None, 1 << 20], ids=["standalone", "group"])
def test_load_stops_between_binaries_and_frees_what_it_loaded(
    backend, bins, spill_fill
):
    """A service told to stop mid-load gives up before the next binary."""
    paths = [bins[n].bin_path for n in ("matmul_tanh", "multi_io", "kv_decode")]

    def live() -> list[qnnrt.Context]:
        return [c for c in backend.contexts if not c.closed]

    before = live()
    seen: list[int] = []

    class Stop(Exception):
        pass

    def before_each() -> None:
        seen.append(len(live()) - len(before))
        if seen[-1] == 1:  # stop once one binary has loaded
            raise Stop

    with pytest.raises(Stop):
        qnnrt.ContextGroup.open(
            backend, paths, spill_fill_bytes=spill_fill, before_each=before_each
        )
    assert seen[-1] == 1 and seen.count(1) == 1
    assert live() == before  # the one it loaded is freed again


def test_group_without_spill_fill_needs_no_registration(backend, bins):
    paths = [bins[n].bin_path for n in ("matmul_tanh", "multi_io")]
    with qnnrt.ContextGroup.open(backend, paths) as group:
        assert group.spill_fill_bytes == 0
        assert group.status == "standalone (binaries need no spill-fill buffer)"


def test_backend_close_frees_contexts_newest_first(bins, caplog):
    be = qnnrt.Backend(log_level="info")
    a = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
    b = qnnrt.Context.open(be, bins["multi_io"].bin_path)
    handles = (a.handle, b.handle, be.device, be.handle)
    with caplog.at_level(logging.INFO, logger="qnnrt.native"):
        be.close()
    assert a.closed and b.closed and be.closed
    started = [
        m.split("<I>")[-1].strip().split(" started")[0] + m.split("started")[-1]
        for m in (r.getMessage() for r in caplog.records)
        if " started" in m and "_free" in m
    ]
    assert started == [
        f"QnnContext_free. context = {hex(handles[1])}",
        f"QnnContext_free. context = {hex(handles[0])}",
        f"QnnDevice_free. device = {hex(handles[2])}",
        f"QnnBackend_free. backend = {hex(handles[3])}",
    ]
    be.close()  # idempotent


def test_use_after_close_raises_instead_of_crashing(bins):
    with qnnrt.Backend() as be:
        ctx = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
        graph = ctx.graph()
        x = np.ones((1, 64), np.float32)
        graph.bind("x", x)
        graph.bind("y", np.empty((1, 64), np.float32))
        ctx.close()
        ctx.close()
        with pytest.raises(RuntimeError, match="closed"):
            graph.execute()
        with pytest.raises(RuntimeError, match="closed"):
            graph.run({"x": x})
        with pytest.raises(RuntimeError, match="closed"):
            graph.bind("x", x)
        # the backend still works
        ctx2 = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
        assert ctx2.graph().run({"x": x})[0].shape == (1, 64)
    with pytest.raises(RuntimeError, match="backend is closed"):
        qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
    with pytest.raises(RuntimeError, match="closed"):
        ctx2.graph().run({"x": x})


def _corrupt(src: Path, dst: Path, how: str) -> Path:
    data = bytearray(src.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 3]
    elif how == "zeros":
        data = bytearray(len(data))
    elif how == "text":
        data = bytearray(b"this is not a context binary\n" * 100)
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("how", ["truncated", "zeros", "text"])
def test_broken_binary_is_a_clear_error(backend, bins, tmp_path, how):
    bad = _corrupt(bins["matmul_tanh"].bin_path, tmp_path / f"{how}.bin", how)
    with pytest.raises(qnnrt.QnnError) as err:
        qnnrt.Context.open(backend, bad)
    assert err.value.code in (30001, 30010)
    assert err.value.call == "systemContextGetBinaryInfo"
    assert str(bad) in str(err.value)
    # nothing else broke
    assert qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()


def test_empty_and_missing_files(backend, tmp_path):
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        qnnrt.Context.open(backend, tmp_path / "empty.bin")
    with pytest.raises(FileNotFoundError):
        qnnrt.Context.open(backend, tmp_path / "nope.bin")


def test_unknown_graph_name(backend, bins):
    ctx = qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path)
    with pytest.raises(KeyError, match="no graph 'nope'"):
        ctx.graph("nope")


def test_a_with_block_closes_the_context(backend, bins):
    with qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path) as ctx:
        assert not ctx.closed and ctx.graph()
    assert ctx.closed


def test_forked_child_never_tears_down_the_parents_handles(bins):
    with qnnrt.Backend() as be:
        graph = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path).graph()
        x = np.ones((1, 64), np.float32)
        before = graph.run({"x": x})[0]
        pid = os.fork()
        if pid == 0:  # child: using or closing must not touch QNN
            code = 0
            try:
                graph.run({"x": x})
                code = 3
            except RuntimeError as exc:
                code = 0 if "forked child" in str(exc) else 4
            be.close()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        np.testing.assert_array_equal(graph.run({"x": x})[0], before)


def test_context_close_drops_pinned_arrays_only_after_the_context_is_freed(
    bins, caplog
):
    with qnnrt.Backend(log_level="info") as be:
        ctx = qnnrt.Context.open(be, bins["matmul_tanh"].bin_path)
        graph = ctx.graph()
        x = np.ones((1, 64), np.float32)
        log = logging.getLogger("qnnrt.test")
        weakref.finalize(x, log.info, "pinned array dropped")
        graph.bind("x", x)
        del x
        with caplog.at_level(logging.INFO):
            ctx.close()
            gc.collect()
    messages = [r.getMessage() for r in caplog.records]
    freed = [i for i, m in enumerate(messages) if "QnnContext_free done" in m]
    dropped = messages.index("pinned array dropped")
    assert freed and freed[0] < dropped, messages
