"""Voice-bundle checks of ``hexvoice doctor``: intact, built for this NPU, and runs.

``npu-run`` is the end-to-end proof: a real context load and one execute of the
bundle's smallest graph on this machine's QNN backend (the DSP on a board, the
HTP simulator on x86_64).  When it fails, :func:`diagnose` names the known setup
cause from QNN's error code and log lines (docs/board.md, board setup; setup faults).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Final

import numpy as np

import qnnrt
from daemon.sdk.bundles.manifest import Bundle
from daemon.sdk.verify import TargetMismatch, target_problems

from .checks import Check, Finding, error, ok, skip, warning
from .target import ENV_FILE, BoardTarget, install_fix

_KIB: Final = 1024
#: QnnError codes with a known setup cause (qnnrt/c/errors.py, docs/board.md, board
#: setup).
_NO_PD: Final = 1002
_STUB_OR_SKEL: Final = 1009
_SDK_MISMATCH: Final = (5000, 5004)
_RECOPY: Final = "copy the bundle again; `hexvoice bundle verify DIR` re-checks it"


@dataclass(frozen=True)
class BundleIntact(Check):
    """``verify_bundle``: hashes, each graph's I/O and the engine's graphs.  Its
    HTP-target problems are the ``bundle-target`` check's (they need a
    recompile, not a recopy)."""

    slow = True

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        b = t.bundle
        if b is None:
            return [skip("no --bundle given")]
        if isinstance(b, Exception):
            return [error(str(b), "point --bundle at a voice directory (voice.yaml)")]
        problems = [p for p in t.bundle_problems if not isinstance(p, TargetMismatch)]
        if problems:
            return [error(p, _RECOPY) for p in problems]
        io = "" if isinstance(t.lib, Exception) else " and graph I/O"
        return [
            ok(
                f"{b.name} ({b.engine}): {len(b.graphs)} graphs, "
                f"{len(b.binaries) + len(b.files)} files; hashes{io} match; "
                f"the engine has every graph it runs"
            )
        ]


@dataclass(frozen=True)
class BundleTarget(Check):
    """Every binary is built for the bundle's target and this profile's HTP: arch,
    SoC model, VTCM (the check ``verify_bundle`` runs, against this profile)."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        b, h = t.bundle, t.profile.htp
        if b is None:
            return [skip("no --bundle given")]
        if not isinstance(b, Bundle) or isinstance(t.lib, Exception):
            return [skip("needs a readable bundle and qnn-load")]
        fix = (
            f"recompile the bundle for HTP v{h.arch} "
            f"(`python -m scripts.common.qnn_compile ... --target {t.profile.name}`)"
        )
        found = []
        if b.target not in h.bundle_targets:
            found.append(
                warning(
                    f"bundle target {b.target!r} is not one of "
                    f"{list(h.bundle_targets)}",
                    fix,
                )
            )
        infos = {
            f: i for f, i in t.binary_infos.items() if not isinstance(i, Exception)
        }
        found += [error(p, fix) for p in target_problems(b, infos, t.profile)]
        return found or [ok(f"{len(b.graphs)} graphs for HTP v{h.arch}")]


def diagnose(text: str, code: int | None, t: BoardTarget) -> tuple[str, str] | None:
    """(cause, fix) for a known board failure in an error message or QNN log."""
    p = t.profile
    group = p.fastrpc.device_group if p.fastrpc else "<device group>"
    user = p.service_user or "$USER"
    rules = [
        (
            "Unsupported SoC model" in text,
            f"wrong QNN library build for this SoC (needs lib/{p.qnn.flavour})",
            install_fix(p),
        ),
        (
            "openSessionForPriority" in text or "createUnsignedPD" in text,
            "no FastRPC session: the user cannot open the DSP device node",
            f"sudo usermod -aG {group} {user}; restart the service (log out and "
            f"back in for a shell)",
        ),
        (
            "Stub lib id mismatch" in text,
            "the HTP stub and skel come from different QNN SDKs",
            install_fix(p),
        ),
        (
            "Skel" in text or code == _STUB_OR_SKEL,
            "the HTP stub or skel failed to load",
            f"set -a; . {ENV_FILE}; set +a (LD_LIBRARY_PATH for the stub, "
            f"ADSP_LIBRARY_PATH for the skel)",
        ),
        (
            code in _SDK_MISMATCH,
            "the context binary was compiled with another QNN SDK (see qnn-version)",
            "use the QNN runtime the bundle was compiled with, or recompile it",
        ),
        (
            code == _NO_PD or "Failed to find available PD" in text,
            "NPU memory exhausted",
            "stop other NPU users; the daemon loads all graphs as one group",
        ),
    ]
    return next(((cause, fix) for hit, cause, fix in rules if hit), None)


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@dataclass(frozen=True)
class NpuRun(Check):
    """A real context load and one execute of the smallest graph."""

    slow = True

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        b, lib = t.bundle, t.lib
        if b is None:
            return [skip("no --bundle given: nothing to load")]
        if not isinstance(b, Bundle) or isinstance(lib, Exception) or t.bundle_problems:
            return [skip("needs qnn-load and an intact bundle")]
        key, spec = min(
            b.graphs.items(), key=lambda kv: b.path(kv[1].file).stat().st_size
        )
        path = b.path(spec.file)
        capture = _Capture()
        qlog = logging.getLogger("qnnrt")
        qlog.addHandler(capture)
        try:
            t0 = time.perf_counter()
            with qnnrt.Backend(lib=lib) as backend:
                graph = qnnrt.Context.open(backend, path).graph(spec.graph)
                feeds = {
                    i.name: np.zeros(
                        i.shape, np.float32 if i.quantization else i.native_dtype
                    )
                    for i in graph.inputs
                }
                outs = graph.run(feeds)
            seconds = time.perf_counter() - t0
        except (qnnrt.QnnError, OSError, ValueError) as exc:
            code = getattr(exc, "code", None)
            cause = diagnose("\n".join([str(exc), *capture.lines]), code, t)
            msg = f"{spec.file} ({key}): {exc}"
            if cause is None:
                return [error(msg, "see the QNN log lines above; run with -v for more")]
            return [error(f"{msg} -> {cause[0]}", cause[1])]
        finally:
            qlog.removeHandler(capture)
        size = path.stat().st_size // _KIB
        bad = [
            i
            for i, o in enumerate(outs)
            if o.dtype.kind == "f" and not np.isfinite(o).all()
        ]
        if bad:
            return [
                warning(
                    f"{spec.file} ({key}) ran, but output(s) {bad} are not finite for "
                    f"zero inputs",
                    "check the graph with `hexvoice bundle verify` on the build host",
                )
            ]
        return [
            ok(f"loaded {spec.file} ({size} KiB) and ran {key} once in {seconds:.2f} s")
        ]
