"""NpuWorker: one thread owns the QNN calls; stop finishes the running job."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import qnnrt


def test_calls_run_on_the_worker_thread_in_order():
    worker = qnnrt.NpuWorker("npu-test")
    seen = []
    futs = [
        worker.submit(lambda i=i: seen.append((i, threading.current_thread().name)))
        for i in range(5)
    ]
    for f in futs:
        f.result(timeout=5)
    assert seen == [(i, "npu-test") for i in range(5)]
    assert worker.stop(5)


def test_exceptions_reach_the_caller_and_the_worker_survives():
    worker = qnnrt.NpuWorker()
    with pytest.raises(ZeroDivisionError):
        worker.call(lambda: 1 / 0)
    assert worker.call(lambda: 42) == 42
    worker.stop(5)


def test_stop_finishes_the_running_job_and_fails_queued_ones():
    worker = qnnrt.NpuWorker()
    gate, running = threading.Event(), threading.Event()

    def slow() -> str:
        running.set()
        gate.wait(5)
        return "done"

    first = worker.submit(slow)
    running.wait(5)
    queued = worker.submit(lambda: "never")
    stopper = threading.Thread(target=worker.stop, args=(5,))
    stopper.start()
    gate.set()
    stopper.join(5)
    assert first.result(timeout=5) == "done"
    with pytest.raises(qnnrt.WorkerStopped):
        queued.result(timeout=5)
    with pytest.raises(qnnrt.WorkerStopped):
        worker.submit(lambda: None)


def test_graph_calls_through_the_worker(backend, bins):
    worker = qnnrt.NpuWorker()
    graph = worker.call(
        lambda: qnnrt.Context.open(backend, bins["matmul_tanh"].bin_path).graph()
    )
    (y,) = worker.call(graph.run, {"x": np.ones((1, 64), np.float32)})
    assert y.shape == (1, 64)
    worker.call(graph.context.close)  # release QNN on the worker thread
    worker.stop(5)
