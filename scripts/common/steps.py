"""Resumable pipeline steps: a JSON state file keyed by the hashes of each step's
inputs, so a rerun skips every step whose inputs, options and code are unchanged
and whose outputs are still there. Progress goes to stderr.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "state.json"
_CHUNK = 1 << 20


@dataclass
class BuildReport:
    """What a pipeline run built, each step's results, and which steps ran."""

    bundle: Path
    tar: Path
    results: dict[str, dict] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def hash_path(path: Path) -> str:
    """sha256 of a file, or of every file (name + content) under a directory."""
    h = hashlib.sha256()
    path = Path(path)
    files = (
        sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    )
    for p in files:
        h.update(str(p.relative_to(path) if path.is_dir() else p.name).encode())
        with open(p, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    return h.hexdigest()


def code_hash(roots: Iterable[Path]) -> str:
    """Hash of the pipeline's own sources (a code change redoes every step)."""
    h = hashlib.sha256()
    for root in roots:
        if not Path(root).exists():  # a moved file would silently drop out
            raise FileNotFoundError(f"code root {root} does not exist")
        for p in sorted(Path(root).rglob("*") if Path(root).is_dir() else [root]):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(p.name.encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return {"path": str(value), "sha256": hash_path(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class Steps:
    """Runs named steps in order; `run` returns each step's (stored) result."""

    def __init__(self, work: Path, total: int, code: str, log=None) -> None:
        self.work, self.total, self.code = Path(work), total, code
        self.work.mkdir(parents=True, exist_ok=True)
        self.path = self.work / STATE_FILE
        self.state: dict[str, Any] = {}
        if self.path.is_file():
            try:
                self.state = json.loads(self.path.read_text())
            except json.JSONDecodeError:
                self.state = {}  # a damaged state only costs a full rebuild
        self.index = 0
        self.ran: list[str] = []
        self.skipped: list[str] = []
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))

    def run(
        self,
        name: str,
        inputs: Mapping[str, Any],
        outputs: Iterable[Path],
        fn: Callable[[], Mapping[str, Any] | None],
    ) -> dict[str, Any]:
        self.index += 1
        tag = f"[{self.index}/{self.total}] {name}"
        outputs = [Path(p) for p in outputs]
        key = hashlib.sha256(
            json.dumps(
                {"step": name, "code": self.code, "inputs": _jsonable(inputs)},
                sort_keys=True,
            ).encode()
        ).hexdigest()
        prev = self.state.get(name)
        if prev and prev.get("key") == key and all(p.exists() for p in outputs):
            self.log(f"{tag}: up to date, skipped")
            self.skipped.append(name)
            return dict(prev.get("result", {}))
        self.log(f"{tag} ...")
        start = time.monotonic()
        result = dict(fn() or {})
        seconds = time.monotonic() - start
        self.state[name] = {"key": key, "result": result, "seconds": round(seconds, 2)}
        self._save()
        self.log(f"{tag}: done in {seconds:.1f} s")
        self.ran.append(name)
        return result

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps(self.state, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
