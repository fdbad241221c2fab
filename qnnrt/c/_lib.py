"""Find, load and version-check ``libQnnHtp.so`` + ``libQnnSystem.so``.

Loading is lazy (nothing happens at import) and cached per directory: a shared
object stays mapped for the life of the process anyway, and libQnnHtp must never be
dlclose'd (the HTP backend keeps worker threads alive).
"""

from __future__ import annotations

import ctypes as C
import importlib.util
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from . import _api
from .dsp import DspSetup
from .dsp import prepare as prepare_dsp
from .errors import QnnLibraryError, check

_LOGGER = logging.getLogger(__name__)
#: Where native libraries' own prints end up (log.py logs QNN's there too).
_NATIVE = logging.getLogger("qnnrt.native")

#: Environment override naming the directory that holds the QNN host libraries.
ENV_LIB_DIR: Final = "QNN_LIB_DIR"
HTP_LIBRARY: Final = "libQnnHtp.so"
SYSTEM_LIBRARY: Final = "libQnnSystem.so"
#: Where ``board/install.sh`` copies the SDK's aarch64-oe-linux-gcc11.2 libraries.
DEFAULT_BOARD_LIB_DIRS: Final = ("/opt/hexvoice/qnn/lib",)
#: The x86_64 simulator build ships inside this wheel (extra ``sim``).
_SIM_PACKAGE: Final = "onnxruntime_qnn"

_ELF_MAGIC: Final = b"\x7fELF"
#: elf.h: e_machine (little-endian u16 after e_ident[16] and e_type) of x86_64.
#: There is no x86_64 HTP: an x86_64 libQnnHtp.so is the simulator.
_E_MACHINE: Final = slice(18, 20)
_EM_X86_64: Final = 62
_LOCK = threading.Lock()
_LOADED: dict[Path, QnnLibrary] = {}


@dataclass(frozen=True)
class ApiVersion:
    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @classmethod
    def from_c(cls, v: _api.Qnn_Version_t) -> ApiVersion:
        return cls(v.major, v.minor, v.patch)


class QnnLibrary:
    """Function tables of one loaded pair of QNN host libraries."""

    def __init__(self, lib_dir: Path) -> None:
        self.lib_dir = lib_dir
        #: The x86_64 HTP simulator, not a board (expected refusals are INFO).
        self.simulator = _elf_head(lib_dir / HTP_LIBRARY)[_E_MACHINE] == (
            _EM_X86_64.to_bytes(2, "little")
        )
        #: Board only: the HTP stub and DSP skel (see prepare_dsp).
        self.dsp: DspSetup | None = None
        htp = _dlopen(lib_dir / HTP_LIBRARY)
        system = _dlopen(lib_dir / SYSTEM_LIBRARY)
        self._keep = (htp, system)  # never released: no dlclose of libQnnHtp
        core = _providers(htp, _api.QNN_INTERFACE_GET_PROVIDERS, _api.QnnInterface_t)
        sysp = _providers(
            system, _api.QNN_SYSTEM_INTERFACE_GET_PROVIDERS, _api.QnnSystemInterface_t
        )
        iface = _pick(
            core,
            lambda p: p.apiVersion.coreApiVersion.major == _api.QNN_API_VERSION_MAJOR,
            "core",
            lib_dir / HTP_LIBRARY,
            _api.QNN_API_VERSION_MAJOR,
            lambda p: p.apiVersion.coreApiVersion.major,
        )
        siface = _pick(
            sysp,
            lambda p: p.systemApiVersion.major == _api.QNN_SYSTEM_API_VERSION_MAJOR,
            "system",
            lib_dir / SYSTEM_LIBRARY,
            _api.QNN_SYSTEM_API_VERSION_MAJOR,
            lambda p: p.systemApiVersion.major,
        )
        self.backend_id: int = iface.backendId
        self.provider_name: str = (iface.providerName or b"").decode()
        self.core_api_version = ApiVersion.from_c(iface.apiVersion.coreApiVersion)
        self.backend_api_version = ApiVersion.from_c(iface.apiVersion.backendApiVersion)
        self.system_api_version = ApiVersion.from_c(siface.systemApiVersion)
        self._core = iface.QNN_INTERFACE_VER_NAME
        self._system = siface.QNN_SYSTEM_INTERFACE_VER_NAME
        self._interfaces = (iface, siface)  # the tables live inside these structs
        self.build_id = self._read_build_id()

    def core(self, name: str) -> Any:
        """The core-table function ``name``; refuses NULL entries clearly."""
        return _entry(self._core, name, self.lib_dir / HTP_LIBRARY)

    def system(self, name: str) -> Any:
        """The system-table function ``name``."""
        return _entry(self._system, name, self.lib_dir / SYSTEM_LIBRARY)

    def prepare_dsp(self) -> DspSetup | None:
        """Reach the stub and skel (dsp.py), once, before the first session.

        Not at load: reading binary metadata needs no DSP, and must not touch
        the environment."""
        with _LOCK:
            if self.dsp is None and not self.simulator:
                self.dsp = prepare_dsp(self.lib_dir)
        return self.dsp

    def has_capability(self, key: int) -> bool:
        """``propertyHasCapability(key) == QNN_SUCCESS``."""
        return int(self.core("propertyHasCapability")(key)) == _api.QNN_SUCCESS

    def _read_build_id(self) -> str:
        out = C.c_char_p()
        check(self.core("backendGetBuildId")(C.byref(out)), "backendGetBuildId")
        return (out.value or b"").decode(errors="replace")

    def __repr__(self) -> str:
        return (
            f"QnnLibrary({str(self.lib_dir)!r}, build={self.build_id!r}, "
            f"core API {self.core_api_version}, backend API "
            f"{self.backend_api_version}, system API {self.system_api_version})"
        )


def load_library(
    lib_dir: str | os.PathLike[str] | None = None,
    *,
    board_dirs: Sequence[str | os.PathLike[str]] = DEFAULT_BOARD_LIB_DIRS,
    simulator: bool = True,
) -> QnnLibrary:
    """Load (once) the QNN host libraries from the first directory that has them.

    Search order: ``lib_dir``; ``$QNN_LIB_DIR``; the ``onnxruntime_qnn`` wheel
    (x86_64 simulator, unless ``simulator=False``); ``board_dirs`` (a board
    profile's default library dirs).
    """
    candidates = list(_candidate_dirs(lib_dir, board_dirs, simulator))
    explicit = lib_dir is not None or bool(os.environ.get(ENV_LIB_DIR))
    for d in candidates:
        if (d / HTP_LIBRARY).is_file() and (d / SYSTEM_LIBRARY).is_file():
            key = d.resolve()
            with _LOCK:
                if key not in _LOADED:
                    _LOADED[key] = QnnLibrary(key)
                    _LOGGER.info("loaded %r", _LOADED[key])
                return _LOADED[key]
        if explicit:
            # An explicit choice that is wrong must not silently fall through.
            source = "lib_dir" if lib_dir is not None else "$" + ENV_LIB_DIR
            raise QnnLibraryError(
                f"{HTP_LIBRARY} and {SYSTEM_LIBRARY} not found in {str(d)!r} "
                f"(from {source})"
            )
    searched = ", ".join(str(d) for d in candidates) or "(nothing)"
    raise QnnLibraryError(
        f"QNN libraries ({HTP_LIBRARY}, {SYSTEM_LIBRARY}) not found; searched: "
        f"{searched}. Set ${ENV_LIB_DIR} to the directory holding them (board: the "
        f"QAIRT SDK's lib/aarch64-oe-linux-gcc11.2), or install the simulator with "
        f"`pip install 'hexvoice[sim]'` on x86_64."
    )


def simulator_lib_dir() -> Path | None:
    """Directory of the x86_64 HTP simulator libraries, if the wheel is installed."""
    spec = importlib.util.find_spec(_SIM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _candidate_dirs(
    lib_dir: str | os.PathLike[str] | None,
    board_dirs: Sequence[str | os.PathLike[str]],
    simulator: bool,
) -> Iterator[Path]:
    if lib_dir is not None:
        yield Path(lib_dir)
        return
    env = os.environ.get(ENV_LIB_DIR)
    if env:
        yield Path(env)
        return
    sim = simulator_lib_dir() if simulator else None
    if sim is not None:
        yield sim
    for d in board_dirs:
        yield Path(d)


def _elf_head(path: Path) -> bytes:
    with path.open("rb") as f:
        head = f.read(_E_MACHINE.stop)
    if not head.startswith(_ELF_MAGIC) or len(head) < _E_MACHINE.stop:
        raise QnnLibraryError(f"{str(path)!r} is not an ELF shared object")
    return head


def _dlopen(path: Path) -> C.CDLL:
    _elf_head(path)
    try:
        with native_stdout():
            # RTLD_LOCAL: with RTLD_GLOBAL the wheel's bundled libc++abi/libunwind
            # win symbol resolution and a later `import onnxruntime` segfaults.
            return C.CDLL(str(path), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    except OSError as exc:
        raise QnnLibraryError(
            f"cannot load {str(path)!r}: {exc}. Check that it matches this machine "
            f"(x86_64 simulator vs aarch64-oe-linux-gcc11.2 board build) and that "
            f"its dependencies are on LD_LIBRARY_PATH."
        ) from exc


class native_stdout:
    """Native libraries print banners to fd 1 when loaded (libQnnHtp's
    ``# LIBNATIVE`` line; the QNN EP loads the same library): stdout may be a data
    channel (``qnnrt info --json``) and a user's console is no place for them, so
    fd 1 points at a scratch file meanwhile and what was printed goes to the
    ``qnnrt.native`` debug log."""

    def __enter__(self) -> None:
        sys.stdout.flush()
        self._saved = os.dup(1)
        self._scratch = tempfile.TemporaryFile()
        os.dup2(self._scratch.fileno(), 1)

    def __exit__(self, *exc: object) -> None:
        # The banner goes through C stdio, which buffers it when stdout is not a
        # terminal: flush while fd 1 still points at the scratch file.
        C.CDLL(None).fflush(None)
        os.dup2(self._saved, 1)
        os.close(self._saved)
        self._scratch.seek(0)
        text = self._scratch.read().decode(errors="replace")
        self._scratch.close()
        for line in text.splitlines():
            if line.strip():
                _NATIVE.debug("%s", line.strip())


def _providers(lib: C.CDLL, symbol: str, struct: type) -> list[Any]:
    try:
        fn = getattr(lib, symbol)
    except AttributeError as exc:
        raise QnnLibraryError(f"{lib._name!r} does not export {symbol}") from exc
    fn.restype = _api.Qnn_ErrorHandle_t
    fn.argtypes = _api.GetProvidersFn_argtypes
    plist = C.POINTER(C.c_void_p)()
    n = C.c_uint32()
    check(fn(C.byref(plist), C.byref(n)), symbol)
    return [C.cast(plist[i], C.POINTER(struct)).contents for i in range(n.value)]


def _pick(
    providers: Sequence[Any],
    ok: Any,
    kind: str,
    path: Path,
    want_major: int,
    major_of: Any,
) -> Any:
    for p in providers:
        if ok(p):
            return p
    got = ", ".join(str(major_of(p)) for p in providers) or "none"
    raise QnnLibraryError(
        f"{str(path)!r}: no {kind} interface with API major {want_major} "
        f"(found: {got}); qnnrt was written for QNN SDK {_api.QNN_HEADER_SDK} headers"
    )


def _entry(table: Any, name: str, path: Path) -> Any:
    fn = getattr(table, name)
    if isinstance(fn, int | None) or not fn:
        raise QnnLibraryError(f"{str(path)!r} does not provide {name}()")
    return fn
