"""Board library discovery outside systemd: the HTP stub (host) and skel (DSP).

``libQnnHtp.so`` dlopens ``libQnnHtpV73Stub.so`` by name, so the stub's directory
must be on ``LD_LIBRARY_PATH``; the stub then has FastRPC load
``libQnnHtpV73Skel.so`` on the DSP from a directory on ``ADSP_LIBRARY_PATH`` (or
``DSP_LIBRARY_PATH``), which is ';'-separated.  The systemd unit sets both from
the service environment file; a shell, a test run or a script often sets neither,
and QNN then answers a bare 1009.  :func:`prepare` fixes what it can before the
first FastRPC session: it loads the stub by absolute path (a later dlopen by name
finds the loaded object) and puts the skel's directory on the search path when it
sits where board/install.sh or the QAIRT SDK put it.  What it cannot fix, it
names, and :func:`explained` adds that to the QnnError of a failed start.
"""

from __future__ import annotations

import ctypes as C
import logging
import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .errors import QnnError

_LOGGER = logging.getLogger(__name__)

#: QCS8550's HTP (daemon/targets/qcs8550.yaml), the only board
#: hexvoice targets.
HTP_ARCH: Final = 73
STUB: Final = f"libQnnHtpV{HTP_ARCH}Stub.so"
SKEL: Final = f"libQnnHtpV{HTP_ARCH}Skel.so"
ADSP_ENV: Final = "ADSP_LIBRARY_PATH"
#: The newer name upstream fastrpc also reads (apps_std_internal.h).
DSP_ENV: Final = "DSP_LIBRARY_PATH"
SEPARATOR: Final = ";"
#: libcdsprpc's built-in search list, used when neither variable is set
#: (docs/board.md, board setup; upstream fastrpc).  Setting a variable replaces it, so a
#: value qnnrt writes keeps these.
FASTRPC_DEFAULT_DIRS: Final = (
    "/usr/lib/dsp/cdsp",
    "/usr/lib/dsp/adsp",
    "/usr/lib/rfsa/adsp",
    "/usr/lib/dsp",
)
#: QNN codes of a stub/skel that did not load or do not match (errors.py hints).
DSP_LOAD_CODES: Final = frozenset({1007, 1008, 1009})

_loaded: list[C.CDLL] = []  # never dlclose'd, like libQnnHtp itself


def skel_candidates(lib_dir: Path) -> list[Path]:
    """Where a skel sits relative to the host libraries: board/install.sh
    (``qnn/lib`` + ``qnn/dsp``), the QAIRT SDK (``lib/<flavour>`` +
    ``lib/hexagon-v73/unsigned``), or one flat directory."""
    return [
        lib_dir.parent / "dsp",
        lib_dir.parent / f"hexagon-v{HTP_ARCH}" / "unsigned",
        lib_dir,
    ]


def search_path(environ: MutableMapping[str, str]) -> tuple[str, ...]:
    """The directories FastRPC searches for skels, as this environment says."""
    set_vars = [environ[v] for v in (DSP_ENV, ADSP_ENV) if environ.get(v)]
    if not set_vars:
        return FASTRPC_DEFAULT_DIRS
    return tuple(d for value in set_vars for d in value.split(SEPARATOR) if d)


@dataclass
class DspSetup:
    lib_dir: Path
    #: The stub, loaded by absolute path (None: not beside libQnnHtp.so).
    stub: Path | None = None
    #: The directory on the search path that holds the skel (None: none does).
    skel_dir: Path | None = None
    #: Variables qnnrt set or extended to reach ``skel_dir``.
    extended: tuple[str, ...] = ()
    problems: list[str] = field(default_factory=list)


def prepare(lib_dir: Path, environ: MutableMapping[str, str] | None = None) -> DspSetup:
    """Load the stub and reach the skel before any FastRPC session opens.

    ``environ`` defaults to ``os.environ``: FastRPC reads it in this process when
    the first session opens, so a value set here is the one it uses.
    """
    env = os.environ if environ is None else environ
    setup = DspSetup(lib_dir)
    _load_stub(setup, env)
    _reach_skel(setup, env)
    return setup


def _load_stub(setup: DspSetup, env: MutableMapping[str, str]) -> None:
    path = setup.lib_dir / STUB
    if path.is_file():
        try:
            _loaded.append(C.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW))
            setup.stub = path
        except OSError as exc:
            setup.problems.append(f"cannot load {path}: {exc}")
        return
    ld = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    if not any((Path(d) / STUB).is_file() for d in ld):
        setup.problems.append(
            f"{STUB} is neither beside libQnnHtp.so ({setup.lib_dir}) nor on "
            f"LD_LIBRARY_PATH: set LD_LIBRARY_PATH to the directory holding it"
        )


def _reach_skel(setup: DspSetup, env: MutableMapping[str, str]) -> None:
    for d in search_path(env):
        if (Path(d) / SKEL).is_file():
            setup.skel_dir = Path(d)
            return
    found = next(
        (c for c in skel_candidates(setup.lib_dir) if (c / SKEL).is_file()), None
    )
    if found is None:
        shown = env.get(ADSP_ENV, "unset")
        setup.problems.append(
            f"{SKEL} is in no directory on {ADSP_ENV} ({shown}) and not beside the "
            f"QNN libraries: set {ADSP_ENV} to '<directory holding {SKEL}>"
            f"{SEPARATOR}{SEPARATOR.join(FASTRPC_DEFAULT_DIRS)}'"
        )
        return
    names = [v for v in (DSP_ENV, ADSP_ENV) if env.get(v)] or [ADSP_ENV]
    for name in names:
        rest = env.get(name) or SEPARATOR.join(FASTRPC_DEFAULT_DIRS)
        env[name] = f"{found}{SEPARATOR}{rest}"
    setup.skel_dir, setup.extended = found, tuple(names)
    _LOGGER.info(
        "%s was on no DSP search path; added %s to %s", SKEL, found, ", ".join(names)
    )


def explained(setup: DspSetup | None, exc: QnnError) -> QnnError:
    """``exc`` with what qnnrt found about the stub and skel, for DSP load codes."""
    if setup is None or exc.code not in DSP_LOAD_CODES:
        return exc
    if setup.problems:
        detail = "; ".join(setup.problems)
    else:
        stub = setup.stub or f"{STUB} (by name, from LD_LIBRARY_PATH)"
        detail = (
            f"loaded {stub}; {SKEL} is in {setup.skel_dir} on the DSP search path: "
            f"check that both come from the same QAIRT SDK as libQnnHtp.so"
        )
    if exc.detail:
        detail = f"{exc.detail}: {detail}"
    return QnnError(exc.code, exc.call, detail)
