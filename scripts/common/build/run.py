"""Running a build's declared stages: resumably, each keyed by its inputs,
the results it reads and its code, with a progress line per stage.

State lives in ``<work>/state.json`` (stage -> key, stored result, seconds).
A rerun skips every stage whose key is unchanged and whose outputs are still
there, and hands on its stored result; a stage whose key changed runs again,
and so does every stage that reads its result, if that result changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from scripts.common.build.code import code_key
from scripts.common.build.fpu import keep_subnormals
from scripts.common.build.stage import Stage, StageGroup, from_json, to_json

STATE_FILE: Final = "state.json"
_CHUNK: Final = 1 << 20
C = TypeVar("C")
Log = Callable[[str], None]


class DeclarationError(ValueError):
    """A build's stage list is not a valid declaration."""


@dataclass
class StageRun:
    """What one run of a build's stages did."""

    results: dict[str, Any] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


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


def jsonable(value: Any) -> Any:
    """``value`` with every Path replaced by its name and content hash."""
    if isinstance(value, Path):
        # its name and content, not where it is: a moved work dir or checkout
        # resumes instead of rebuilding
        return {"name": value.name, "sha256": hash_path(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


Declared = Stage[Any] | StageGroup[Any]


def check_declaration(stages: Sequence[Declared], seen: set[str] | None = None) -> None:
    """Names are unique and every ``after`` names an earlier stage or group."""
    seen = set() if seen is None else seen
    for stage in stages:
        if stage.name in seen:
            raise DeclarationError(f"two stages are named {stage.name!r}")
        missing = [a for a in getattr(stage, "after", ()) if a not in seen]
        if missing:
            raise DeclarationError(
                f"stage {stage.name!r} reads {missing}, which no earlier stage is"
            )
        seen.add(stage.name)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class _State:
    def __init__(self, work: Path) -> None:
        self.path = work / STATE_FILE
        self.data: dict[str, Any] = {}
        if self.path.is_file():
            try:
                self.data = json.loads(self.path.read_text())
            except json.JSONDecodeError:
                self.data = {}  # a damaged state only costs a full rebuild

    def save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def run_stages(
    stages: Sequence[Declared], ctx: C, work: Path, log: Log = _stderr
) -> StageRun:
    """Run (or resume) ``stages`` over ``ctx`` in ``work``; stages whose
    ``when`` is False are left out (a stage reading one gets None for it)."""
    check_declaration(stages)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    runner = _Runner(_State(work), ctx, log)
    pending = [s for s in stages if s.when(ctx)]
    runner.total = sum(
        item.expect(ctx) if isinstance(item, StageGroup) else 1 for item in pending
    )
    names = {s.name for s in stages}
    for item in pending:
        if isinstance(item, StageGroup):
            members = [s for s in item.make(ctx) if s.when(ctx)]
            check_declaration(members, set(names))
            runner.total += len(members) - item.expect(ctx)
            for stage in members:
                runner.run(stage)
            runner.group(item.name, [s.name for s in members])
        else:
            runner.run(item)
    return runner.out


class _Runner:
    def __init__(self, state: _State, ctx: Any, log: Log) -> None:
        self.state, self.ctx, self.log = state, ctx, log
        self.out = StageRun()
        self.stored: dict[str, Any] = {}  # results as JSON: they key readers
        self.index = self.total = 0

    def group(self, name: str, members: list[str]) -> None:
        self.out.results[name] = {m: self.out.results[m] for m in members}
        self.stored[name] = {m: self.stored[m] for m in members}

    def run(self, stage: Stage[Any]) -> None:
        self.index += 1
        tag = f"[{self.index}/{self.total}] {stage.name}"
        out, stored = self.out, self.stored
        read = {a: out.results.get(a) for a in stage.after}
        key = hashlib.sha256(
            json.dumps(
                {
                    "stage": stage.name,
                    "code": code_key(stage.modules),
                    "inputs": jsonable(stage.inputs(self.ctx)),
                    "after": {a: stored.get(a) for a in stage.after},
                },
                sort_keys=True,
            ).encode()
        ).hexdigest()
        prev = self.state.data.get(stage.name)
        outputs = [Path(p) for p in stage.outputs(self.ctx)]
        if prev and prev.get("key") == key and all(p.exists() for p in outputs):
            self.log(f"{tag}: up to date, skipped")
            out.skipped.append(stage.name)
            stored[stage.name] = prev.get("result")
            out.results[stage.name] = from_json(stored[stage.name], stage.result)
            out.seconds[stage.name] = 0.0
            return
        self.log(f"{tag} ...")
        start = time.monotonic()
        result = stage.run(self.ctx, read)
        keep_subnormals()  # a stage that loaded upstream code may have set FTZ/DAZ
        seconds = time.monotonic() - start
        stored[stage.name] = to_json(result)
        # read back as a resumed run would see it, so both runs go on alike
        out.results[stage.name] = from_json(stored[stage.name], stage.result)
        self.state.data[stage.name] = {
            "key": key,
            "result": stored[stage.name],
            "seconds": round(seconds, 2),
        }
        self.state.save()
        self.log(f"{tag}: done in {seconds:.1f} s")
        out.ran.append(stage.name)
        out.seconds[stage.name] = seconds
