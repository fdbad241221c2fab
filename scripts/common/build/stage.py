"""A build stage, declared: what it does, what it reads, what it leaves, and
the type of what it reports.

``run(ctx, results)`` does the work; ``results`` holds the typed results of
the stages named in ``after`` (and only those: a stage is keyed by what it
reads, so it must say what it reads).  The result is a dataclass (or None for
a stage with nothing to report); the runner stores it as JSON in the work
dir's state file and gives a resumed run the same typed value back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

C = TypeVar("C")
#: results of earlier stages, by stage name
Results = Mapping[str, Any]


def _no_inputs(ctx: Any) -> Mapping[str, Any]:
    return {}


def _no_outputs(ctx: Any) -> Iterable[Path]:
    return ()


def _always(ctx: Any) -> bool:
    return True


def _unknown(ctx: Any) -> int:
    return 0


@dataclass(frozen=True)
class Stage(Generic[C]):
    """One step of a build.

    name     unique within the build; the progress line and state key
    run      ``run(ctx, results) -> result``; its module (and what that module
             imports, transitively) keys the stage's code
    result   the result's type (a dataclass), or None
    inputs   ``inputs(ctx)``: what the stage reads besides code and earlier
             results (a Path is hashed by content: a file, or a directory's
             files); keep path-only values (work dirs) out
    outputs  ``outputs(ctx)``: files the stage leaves; a missing one reruns it
    after    the stages whose results it reads (their results key it too)
    code     more modules that key it (code it runs without importing, such
             as an engine reached through the registry)
    when     ``when(ctx)``: False leaves the stage out of this run
    """

    name: str
    run: Callable[[C, Results], Any]
    result: type | None = None
    inputs: Callable[[C], Mapping[str, Any]] = _no_inputs
    outputs: Callable[[C], Iterable[Path]] = _no_outputs
    after: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    when: Callable[[C], bool] = _always

    @property
    def modules(self) -> tuple[str, ...]:
        return (self.run.__module__, *self.code)


@dataclass(frozen=True)
class StageGroup(Generic[C]):
    """Stages known only once earlier stages ran (one compile stage per
    binary of the exported graphs): ``make(ctx)`` lists them when the run
    reaches the group.  A later stage that names the group in ``after`` reads
    a dict of its stages' results, by stage name.  ``expect(ctx)``: how many
    stages it will likely hold, for the progress lines' total until it is
    planned (then its real count replaces it)."""

    name: str
    make: Callable[[C], list[Stage[C]]]
    when: Callable[[C], bool] = _always
    expect: Callable[[C], int] = _unknown


def _encode(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise NotImplementedError(f"cannot store a {type(value).__name__}")


def _decode(type_: type, value: Any) -> Any:
    if type_ is Path:
        return Path(value)
    raise NotImplementedError(f"cannot read back a {type_}")


def to_json(result: Any) -> Any:
    """A stage result as JSON-able builtins."""
    return msgspec.to_builtins(result, enc_hook=_encode)


def from_json(data: Any, type_: type | None) -> Any:
    """A stored result back as ``type_`` (None: the stage reports nothing)."""
    if type_ is None:
        return None
    return msgspec.convert(data, type_, dec_hook=_decode, strict=False)
