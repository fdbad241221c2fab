"""The code each stage of a declared build is keyed by (docs/builds.md, keys),
as repository paths: for the tests that a stage's key holds the code it runs
and not the code of the stages it does not depend on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from scripts.common.build import compile as compiling
from scripts.common.build.code import closure
from scripts.common.build.stage import Stage

ROOT = Path(__file__).resolve().parents[4]


def code_files(modules: Iterable[str]) -> set[str]:
    """Every repository file the ``modules`` can run, relative to the root."""
    return {str(p.relative_to(ROOT)) for p in closure(modules)}


def stage_files(stages: Sequence[Any]) -> dict[str, set[str]]:
    """Each declared stage's code files by name, and (as ``compile``) those of
    every stage of the compile group."""
    keyed = {s.name: code_files(s.modules) for s in stages if isinstance(s, Stage)}
    keyed[compiling.GROUP] = code_files([compiling.__name__])
    return keyed
