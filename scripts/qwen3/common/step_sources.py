"""Hashing the sources each step of a Qwen3 build depends on (each build's
pipeline/code.py names them).

A step's key holds the hash of its own sources and the directory reader's (it
decides what the model is) only, so a change to the gates or the engine reruns
the gates, not the export (minutes at full size) or the compiles.  The union
of all of them keys whole cached builds (each build's pipeline/cache.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from scripts.common.steps import code_hash

#: the repository, which the source paths are relative to
ROOT: Final = Path(__file__).resolve().parents[3]
#: the Hugging Face directory helpers every build's reader uses
HFDIR: Final = "scripts/qwen3/common/hfdir.py"

Roots = Mapping[str, Sequence[str]]


def union(read: Sequence[str], roots: Roots) -> tuple[str, ...]:
    """Every source of every step and the reader's, sorted."""
    return tuple(sorted({r for rs in roots.values() for r in rs} | set(read)))


def hashes(read: Sequence[str], roots: Roots) -> dict[str, str]:
    """step -> the hash of its sources (and the reader's)."""
    return {
        step: code_hash(ROOT / rel for rel in (*read, *step_roots))
        for step, step_roots in roots.items()
    }


def all_hash(sources: Sequence[str]) -> str:
    return code_hash(ROOT / rel for rel in sources)
