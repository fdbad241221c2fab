"""Keeping IEEE subnormals on the host FPU.

qwen-asr (the Qwen3-ASR oracle) imports nagisa, whose DyNet extension
(PyPI dyNET38) is built with fast-math: loading it sets the SSE control
flags FTZ/DAZ on the importing thread, so from then on subnormals are
flushed to zero.  Every later computation of that thread differs from IEEE
arithmetic where subnormals occur, and msgspec, which checks ``gt=0`` as
``>= the least subnormal``, then accepts 0 (the typed readers stop refusing
zero scales and timeouts).  The build runner (after each stage) and the test
suite (after collection and after each test) put the flags back.
"""

from __future__ import annotations

#: the least float64 subnormal: compared with the FPU flushing, it is 0
_SUBNORMAL = float.fromhex("0x0.0000000000001p-1022")


def flushes_subnormals() -> bool:
    """Whether this thread's FPU flushes subnormals to zero (FTZ/DAZ)."""
    return not _SUBNORMAL > 0.0


def keep_subnormals() -> bool:
    """Turn FTZ/DAZ off on this thread if something turned them on; True if
    it had to.  torch's setter is the one at hand: only processes that load
    upstream code (which brings torch) ever get here."""
    if not flushes_subnormals():
        return False
    import torch

    torch.set_flush_denormal(False)
    return True
