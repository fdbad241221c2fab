"""``qnn-memory``: which memory the service's QNN buffers will use, decided as it is.

The service opens its Backend with ``memory="auto"``: rpcmem (zero copy) when
``libcdsprpc`` loads, allocates a buffer with a real fd, and QNN registers it with
the first context; host memory otherwise, which the driver copies on every execute.
This check runs those same steps (qnnrt.memory.rpcmem.open_memory, then a real context
load of the bundle's smallest binary) and reports the answer and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import qnnrt
from daemon.sdk.bundles.manifest import Bundle
from qnnrt.memory.rpcmem import open_memory

from .checks import Check, Finding, ok, skip, warning
from .target import BoardTarget


@dataclass(frozen=True)
class QnnMemory(Check):
    slow: ClassVar[bool] = True  # loads a context when --bundle is given

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        lib = t.lib
        if isinstance(lib, Exception):
            return [skip("needs qnn-load")]
        if not t.live:
            return [skip("decided by the running machine itself, not a --root tree")]
        rpc, choice = open_memory("auto")
        if rpc is not None:
            rpc.close()
        if choice.kind == "host":
            return [_host(t, choice.reason)]
        b = t.bundle
        if not isinstance(b, Bundle) or not b.graphs:
            return [
                ok(
                    f"rpcmem zero copy if QNN registers a buffer at the first context "
                    f"load ({choice.reason}); give --bundle to try that step too"
                )
            ]
        try:
            spec = min(b.graphs.values(), key=lambda g: b.path(g.file).stat().st_size)
            with qnnrt.Backend(lib=lib) as backend:
                qnnrt.Context.open(backend, b.path(spec.file))
                choice = backend.memory
        except (qnnrt.QnnError, OSError, ValueError) as exc:
            return [skip(f"no context loads ({exc.__class__.__name__}; see npu-run)")]
        if choice.kind == "host":
            return [_host(t, choice.reason)]
        return [ok(f"rpcmem zero copy ({choice.reason})")]


def _host(t: BoardTarget, reason: str) -> Finding:
    msg = f"host memory: QNN copies every input and output on each execute ({reason})"
    if t.profile.fastrpc is None:  # the simulator has no FastRPC: as expected
        return ok(msg)
    return warning(
        msg,
        f"install the BSP's FastRPC userspace ({t.profile.fastrpc.library}) on "
        f"LD_LIBRARY_PATH; see fastrpc-lib and device-access",
    )
