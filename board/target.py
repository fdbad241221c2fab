"""The board a ``hexvoice doctor`` run inspects, with what its QNN, DSP and bundle
checks share and should compute once: the QNN library directory and its loaded
libraries, the bundle and its verification.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Final

import qnnrt
from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.verify import verify_bundle
from daemon.targets.profile import Profile
from qnnrt import ENV_LIB_DIR  # $QNN_LIB_DIR, as qnnrt.load_library reads it

from .checks import Target

#: The service environment file board/install.sh writes (``python -m board.profile``).
ENV_FILE: Final = "/etc/hexvoice/hexvoice.env"
#: The host maps the binary while the DSP-side weights and spill-fill come from the
#: same (unified) DDR, so a context costs about twice its file size while loading.
CONTEXT_LOAD_FACTOR: Final = 2


@dataclass(frozen=True, kw_only=True)
class BoardTarget(Target):
    profile: Profile
    bundle_dir: Path | None = None

    @cached_property
    def lib_dir(self) -> tuple[str, Path] | None:
        """(directory as named on the board, where it is here) or None."""
        named = self.environ.get(ENV_LIB_DIR) or self.profile.qnn.lib_dir
        if named:
            return named, self.path(named)
        sim = qnnrt.simulator_lib_dir()  # a host Python package, never rooted
        return (str(sim), sim) if sim else None

    @cached_property
    def lib(self) -> qnnrt.QnnLibrary | Exception:
        if self.lib_dir is None:
            return qnnrt.QnnLibraryError("no QNN library directory")
        try:
            return qnnrt.load_library(self.lib_dir[1])
        except (qnnrt.QnnLibraryError, qnnrt.QnnError) as exc:
            return exc

    @cached_property
    def bundle(self) -> Bundle | Exception | None:
        if self.bundle_dir is None:
            return None
        try:
            return Bundle.load(self.bundle_dir)
        except BundleError as exc:
            return exc

    @cached_property
    def bundle_problems(self) -> list[str]:
        assert isinstance(self.bundle, Bundle)
        lib = self.lib
        if isinstance(lib, Exception):
            return verify_bundle(self.bundle, binaries=False)
        return verify_bundle(self.bundle, binaries=True, lib=lib)

    @cached_property
    def binary_infos(self) -> Mapping[str, qnnrt.BinaryInfo | Exception]:
        """Each context binary's metadata (or why not), by file, each read once."""
        assert isinstance(self.bundle, Bundle) and not isinstance(self.lib, Exception)
        out: dict[str, qnnrt.BinaryInfo | Exception] = {}
        for file in self.bundle.binaries:
            try:
                out[file] = qnnrt.read_binary_info(self.bundle.path(file), self.lib)
            except (OSError, ValueError, qnnrt.QnnError) as exc:
                out[file] = exc
        return out

    @property
    def adsp(self) -> tuple[str, str]:
        """The ADSP_LIBRARY_PATH in effect and where it came from."""
        value = self.environ.get("ADSP_LIBRARY_PATH")
        if value is not None:
            return value, "$ADSP_LIBRARY_PATH"
        return self.profile.adsp_value, f"profile default, as in {ENV_FILE}"

    def bundle_bytes(self, graphs_only: bool = False) -> int:
        b = self.bundle
        if not isinstance(b, Bundle):
            return 0
        rels = list(b.binaries)
        rels += [] if graphs_only else list(b.files)
        return sum(b.path(r).stat().st_size for r in rels if b.path(r).is_file())


def install_fix(p: Profile) -> str:
    return (
        f"sudo board/install.sh --qairt <QAIRT SDK dir> (copies lib/{p.qnn.flavour} "
        f"and lib/hexagon-v{p.htp.arch}/unsigned)"
    )
