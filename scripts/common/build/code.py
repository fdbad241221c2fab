"""The code a build stage runs, found from its imports and hashed.

A stage is keyed by the source of every project module it can execute: the
module that defines its work and, transitively, every project module that
module imports, at the top or inside a function.  The set is computed from
the modules' own ``import`` statements (read with ``ast``; nothing is
imported), so moving a file needs no edit here and a change to a gate's code
reruns the gates, not the export.  The project's modules are those not
installed and not in the standard library: this checkout's packages, and in
tests a package written to a temporary folder.  Installed packages (torch,
onnxruntime, upstream's) are keyed by version where it matters, as stage
inputs.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import sysconfig
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Final

#: where installed packages and the standard library live (not the project's)
_INSTALLED: Final = tuple(
    Path(p).resolve()
    for p in {*sysconfig.get_paths().values(), sys.prefix, sys.base_prefix}
    if p and Path(p).is_dir()
)


def _ours(path: Path) -> bool:
    return not any(path.is_relative_to(p) for p in _INSTALLED)


@cache
def _source_root(top: str) -> Path | None:
    """The folder holding top-level module ``top`` when it is the project's
    own (not installed, not the standard library), else None.  Finding a
    top-level module imports nothing."""
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return None
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    places = list(spec.submodule_search_locations or [])
    if spec.origin and spec.has_location:
        places.append(spec.origin)
    if not places:
        return None
    where = Path(places[0]).resolve()
    if not _ours(where):
        return None
    return where.parent  # a package's folder, or a module's file: its parent


def module_file(name: str) -> Path | None:
    """The source file of the project's module ``name`` (a package: its
    ``__init__.py``), or None when it is not one of the project's."""
    loaded = getattr(sys.modules.get(name), "__file__", None)
    if loaded and _ours(Path(loaded).resolve()):  # e.g. a test module
        return Path(loaded).resolve()
    base = _source_root(name.split(".")[0])
    if base is None:
        return None
    path = base.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path, name: str) -> set[str]:
    """Names of the project's modules that module ``name`` (at ``path``)
    imports anywhere in it, with the packages on the way (their
    ``__init__`` runs too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package ``level - 1`` up
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            found.add(base)
            # ``from pkg import mod`` names a module as often as an object
            found.update(f"{base}.{alias.name}" for alias in node.names)
    with_parents = set()
    for name in found:
        parts = name.split(".")
        with_parents.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {n for n in with_parents if module_file(n) is not None}


def closure(modules: Iterable[str]) -> tuple[Path, ...]:
    """Every project source file the ``modules`` can run, sorted."""
    modules = list(modules)
    for name in modules:
        if module_file(name) is None:
            raise ModuleNotFoundError(f"{name} is not a module of this project")
    # a module's packages run when it is imported (a test folder may have none)
    parents = {
        ".".join(m.split(".")[:i]) for m in modules for i in range(1, m.count(".") + 1)
    }
    seen: dict[str, Path] = {}
    todo = [*modules, *(p for p in parents if module_file(p) is not None)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = module_file(name)
        if path is None:
            raise ModuleNotFoundError(f"{name} is not a module of this project")
        seen[name] = path
        todo.extend(_imported(path, name) - seen.keys())
    return tuple(sorted(set(seen.values())))


def code_key(modules: Iterable[str]) -> str:
    """sha256 over the name and content of every file in ``closure(modules)``
    (names, not paths: a checkout's location does not change its code)."""
    h = hashlib.sha256()
    for path in closure(modules):
        h.update(path.name.encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
