"""Child process for test_lifecycle: load, maybe start a worker, then exit.

usage: exit_child.py BIN MODE   (MODE: plain | thread | npu_worker)
Prints READY once a graph call is in flight (or loaded, for plain).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

import numpy as np

import qnnrt


def main() -> None:
    path, mode = sys.argv[1], sys.argv[2]
    # SIGTERM → normal interpreter exit (atexit runs), as a daemon does it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # A Python log callback at DEBUG level is what makes an unjoined exit crash.
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
    backend = qnnrt.Backend(log_level="debug")
    graph = qnnrt.Context.open(backend, path).graph()
    feeds = {t.name: np.zeros(t.shape, t.native_dtype) for t in graph.inputs}
    if mode == "plain":
        graph.run(feeds)
        print("READY", flush=True)
        return  # exit without closing anything
    started = threading.Event()

    def spin() -> None:
        while True:
            graph.run(feeds)
            started.set()  # only once a call has really succeeded

    def feed_worker() -> None:
        worker = qnnrt.NpuWorker()
        while True:  # one graph call per job, as the daemon submits them
            worker.call(graph.run, feeds)
            started.set()

    target = spin if mode == "thread" else feed_worker
    threading.Thread(target=target, daemon=True).start()
    started.wait()
    print("READY", flush=True)
    threading.Event().wait()  # until SIGTERM


if __name__ == "__main__":
    main()
