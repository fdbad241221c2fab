"""QNN return codes → ``QnnError``; every C call in qnnrt goes through ``check``."""

from __future__ import annotations

from typing import Final

from . import _api

#: Low 16 bits of ``Qnn_ErrorHandle_t`` carry the code (QnnCommon.h).
_ERROR_CODE_MASK: Final = 0xFFFF

#: What a code usually means in practice, and what to do (docs/qnn.md, error codes,
#: board notes).
_HINTS: Final[dict[int, str]] = {
    1002: "out of memory on the NPU side: too many or too large contexts in one "
    "protection domain; load fewer or smaller binaries, share one spill-fill "
    "buffer (one group), or free other NPU users",
    1007: "host<->DSP (FastRPC) communication failed; check the skel on "
    "ADSP_LIBRARY_PATH and access to /dev/adsprpc-smd or /dev/fastrpc-cdsp*",
    1008: "the QNN host library and the DSP skel are from different SDK versions",
    1009: "the HTP stub or skel failed to load; check LD_LIBRARY_PATH and "
    "ADSP_LIBRARY_PATH",
    1011: "FastRPC session is gone (subsystem restart?); restart the service",
    1100: "the DSP failed while executing (e.g. an out-of-range Gather index)",
    5000: "the context binary was compiled for another QNN SDK or target",
    5004: "the context binary's blob version is not supported by this QNN runtime",
    5005: "could not deserialize the context binary (wrong arch/skel, or corrupted)",
    5008: "the context binary was built for another SoC / VTCM / PD configuration",
    5010: "the backend refused this context config (the x86 simulator refuses "
    "multi-context groups)",
    6004: "a tensor does not match the graph (id, dims or buffer)",
    13001: "the HTP perf infrastructure rejected an id or config value",
    13004: "this power option is not supported on this HTP",
    14001: "the HTP device config does not match this runtime's struct layout or "
    "names an unknown SoC",
    30001: "the buffer is not a QNN context binary",
    30010: "the file is not a valid QNN context binary (truncated or corrupted)",
}


class QnnError(RuntimeError):
    """A QNN C call failed: ``code`` (int), ``name`` (QNN enum name), ``call``."""

    def __init__(self, code: int, call: str, detail: str = "") -> None:
        self.code = code
        self.name = error_name(code)
        self.call = call
        self.detail = detail
        hint = _HINTS.get(code)
        msg = f"{call} failed: {self.name} ({code})"
        if detail:
            msg += f": {detail}"
        if hint:
            msg += f" [{hint}]"
        super().__init__(msg)


class QnnLibraryError(OSError):
    """The QNN libraries could not be found, loaded or are the wrong version."""


def error_name(code: int) -> str:
    """The QNN enum name for ``code`` (also system 300xx and perf 130xx codes)."""
    return _api.QNN_ERROR_NAMES.get(code, f"QNN_ERROR_{code}")


def error_code(err: int) -> int:
    """Error code carried by a raw ``Qnn_ErrorHandle_t``."""
    return int(err) & _ERROR_CODE_MASK


def check(err: int, call: str, detail: str = "") -> None:
    """Raise :class:`QnnError` unless ``err`` is ``QNN_SUCCESS``."""
    if err != _api.QNN_SUCCESS:
        raise QnnError(error_code(err), call, detail)
