"""DSP search-path checks of ``hexvoice doctor``: ADSP_LIBRARY_PATH is well formed
and reaches the HTP skel (docs/board.md, board setup).
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.targets.profile import ADSP_SEPARATOR
from qnnrt.c.dsp import DSP_ENV

from .checks import Check, Finding, error, ok, warning
from .target import ENV_FILE, BoardTarget, install_fix


@dataclass(frozen=True)
class AdspPath(Check):
    """ADSP_LIBRARY_PATH is ';'-separated and keeps the system DSP dirs."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p = t.profile
        value, source = t.adsp
        fix = f"export ADSP_LIBRARY_PATH='{p.adsp_value}' (as in {ENV_FILE})"
        if ":" in value and ADSP_SEPARATOR not in value:
            return [
                error(
                    f"ADSP_LIBRARY_PATH={value} uses ':'; FastRPC splits on ';', so "
                    f"this is one directory that does not exist",
                    fix,
                )
            ]
        entries = value.split(ADSP_SEPARATOR)
        dropped = [
            d
            for d in p.adsp_library_path
            if d != p.qnn.dsp_dir and d not in entries and t.path(d).is_dir()
        ]
        found = [ok(f"{value} ({source})")]
        if dropped:
            found = [
                warning(
                    f"ADSP_LIBRARY_PATH ({source}) leaves out the system DSP dir(s) "
                    f"{', '.join(dropped)}; FastRPC finds its own shell and other "
                    f"skels there",
                    fix,
                )
            ]
        dsp = t.environ.get(DSP_ENV)
        if dsp:
            # Upstream fastrpc reads it too: a skel found there is found.
            found.append(ok(f"{DSP_ENV}={dsp} (FastRPC searches it as well)"))
        return found


@dataclass(frozen=True)
class HtpSkel(Check):
    """The V73 skel is in a directory on ADSP_LIBRARY_PATH (or DSP_LIBRARY_PATH)."""

    def run(self, t: BoardTarget) -> list[Finding]:  # type: ignore[override]
        p = t.profile
        value, source = t.adsp
        entries = [e for e in value.split(ADSP_SEPARATOR) if e]
        entries += [e for e in t.environ.get(DSP_ENV, "").split(ADSP_SEPARATOR) if e]
        found = []
        for skel in p.qnn.skel_libs:
            dirs = [e for e in entries if (t.path(e) / skel).is_file()]
            if dirs:
                found.append(ok(f"{skel} in {dirs[0]}"))
            elif p.qnn.dsp_dir and (t.path(p.qnn.dsp_dir) / skel).is_file():
                found.append(
                    error(
                        f"{skel} is in {p.qnn.dsp_dir}, which is not on "
                        f"ADSP_LIBRARY_PATH ({source}: {value}); the DSP cannot "
                        f"load it (QNN 1009 / 1007)",
                        f"export ADSP_LIBRARY_PATH='{p.adsp_value}' (as in {ENV_FILE})",
                    )
                )
            else:
                found.append(
                    error(
                        f"{skel} not found on ADSP_LIBRARY_PATH ({value})",
                        install_fix(p),
                    )
                )
        return found
