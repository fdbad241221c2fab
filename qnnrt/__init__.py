"""qnnrt: a Python runtime for Qualcomm QNN HTP context binaries (ctypes, no shim).

``import qnnrt`` loads nothing: the QNN libraries are found and loaded on first use.
"""

import logging as _logging

from .backend import Backend
from .binary import BinaryInfo, GraphInfo, read_binary_info
from .c._lib import (
    ENV_LIB_DIR,
    QnnLibrary,
    load_library,
    native_stdout,
    simulator_lib_dir,
)
from .c.errors import QnnError, QnnLibraryError, check, error_name
from .context import Context
from .graph import Graph, Timing
from .group import ContextGroup
from .memory.tensor import Quantization, TensorInfo
from .power import POWER_MODES
from .worker import NpuWorker, WorkerStopped

__all__ = [
    "ENV_LIB_DIR",
    "Backend",
    "BinaryInfo",
    "Context",
    "ContextGroup",
    "Graph",
    "GraphInfo",
    "NpuWorker",
    "POWER_MODES",
    "QnnError",
    "QnnLibrary",
    "QnnLibraryError",
    "Quantization",
    "TensorInfo",
    "Timing",
    "WorkerStopped",
    "check",
    "error_name",
    "load_library",
    "native_stdout",
    "read_binary_info",
    "simulator_lib_dir",
]

_logging.getLogger(__name__).addHandler(_logging.NullHandler())
