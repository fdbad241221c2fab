"""The engine registry: what every engine class is, and where to find one.

Engines register under the entry-point group ``hexvoice.engines`` (see
pyproject.toml; tests add theirs through a throw-away dist-info directory).
Every engine class declares its ``task`` as a class attribute, so the registry
can list the engines of one task.  The task protocols (``tts.TtsEngine``,
``asr.AsrEngine``) extend :class:`Engine` with the calls of their task.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Final, Protocol, runtime_checkable

from daemon.sdk.bundles.manifest import MANIFEST, Bundle, BundleError
from daemon.sdk.bundles.needs import GraphNeeds
from daemon.sdk.capabilities import TASKS, Capabilities, Task, VoiceInfo
from daemon.sdk.graphs import Runner

#: Entry-point group under which engines register (pyproject entry-points).
ENTRY_POINT_GROUP: Final = "hexvoice.engines"


@runtime_checkable
class Engine(Protocol):
    """What the host needs from any engine, whatever its task.

    A plain synchronous object: the host opens the graphs (one QNN
    multi-context group for every loaded bundle), hands each engine its graphs
    and calls it on its single NPU worker thread only.  Engines know nothing
    about sockets, asyncio or threads.
    """

    #: manifest ``engine`` value this class serves, e.g. ``"piper-vits"``
    engine_id: str
    #: the job it does; a class attribute, so the registry can list by task
    task: Task

    @classmethod
    def requirements(cls, bundle: Bundle) -> GraphNeeds:
        """Every graph ``load`` runs, with the tensors and shapes it uses (from the
        bundle's params); ``load`` checks exactly these (``bundles.needs.require``)
        and ``verify`` checks the manifest against them.  BundleError if the
        params are invalid."""

    def load(self, bundle: Bundle, graphs: Mapping[str, Runner]) -> None:
        """Read CPU tables from ``bundle``; keep ``graphs`` for requests."""

    def voices(self) -> list[VoiceInfo]: ...

    def capabilities(self) -> Capabilities:
        """What the loaded bundle can do; requests are checked against it."""

    def warmup(self) -> None:
        """Touch every graph and lazily loaded table once."""

    def close(self) -> None: ...


def _registered() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load(ep: EntryPoint) -> type[Engine]:
    cls = ep.load()
    task = getattr(cls, "task", None)
    if task not in TASKS:
        raise TypeError(
            f"engine {ep.name!r} ({ep.value}) declares task {task!r}; "
            f"an engine class must set task to one of {TASKS}"
        )
    return cls  # type: ignore[no-any-return]


def engine_class(engine_id: str) -> type[Engine]:
    """The class registered for ``engine_id`` under ``hexvoice.engines``."""
    found = _registered()
    if engine_id not in found:
        raise LookupError(
            f"no engine {engine_id!r} registered under {ENTRY_POINT_GROUP!r} "
            f"(installed: {sorted(found) or 'none'}; is hexvoice installed?)"
        )
    return _load(found[engine_id])


def engines(task: Task) -> dict[str, type[Engine]]:
    """Every registered engine of ``task``, by engine id (sorted).

    Imports each registered engine's module to read its ``task``; an engine
    that cannot be imported raises here, naming itself (ImportError).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    found: dict[str, type[Engine]] = {}
    for name, ep in sorted(_registered().items()):
        try:
            cls = _load(ep)
        except ImportError as exc:
            raise ImportError(
                f"engine {name!r} ({ep.value}) cannot be imported: {exc}"
            ) from exc
        if cls.task == task:
            found[name] = cls
    return found


def engine_for(bundle: Bundle, engine_id: str | None = None) -> type[Engine]:
    """The engine class registered for ``engine_id`` (default: the manifest's
    ``engine``), refusing one whose task is not the manifest's ``task``: a
    BundleError naming both (LookupError/ImportError: no such engine)."""
    engine_id = engine_id or bundle.engine
    cls = engine_class(engine_id)
    if cls.task != bundle.task:
        raise BundleError(
            f"{MANIFEST}: task {bundle.task!r}, but engine {engine_id!r} does "
            f"{cls.task!r}: it cannot load this bundle"
        )
    return cls
