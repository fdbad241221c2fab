"""One voice bundle as the service sees it: read and verified (``Checked``, with
the ``BundleKey`` a reload compares), then loaded (``LoadedEngine``: its engine,
graphs and voices).  See voiceset.py for the set of them."""

from __future__ import annotations

import hashlib
import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from daemon.sdk.bundles.manifest import MANIFEST, Bundle, BundleError
from daemon.sdk.graphs import GraphHost, Runner
from daemon.sdk.registry import Engine
from daemon.sdk.verify import TargetMismatch, verify_bundle
from daemon.service.config import EngineConfig, VoiceSource
from daemon.service.voices.voice import Voice

_LOGGER = logging.getLogger(__name__)
#: Problems one start-up line names; the rest are counted (one line for the log
#: and STATUS=, which systemctl status shows truncated anyway).
_SHOWN: Final = 5
#: Numbers the loads of one process: a kept engine keeps its number.
_LOADS = itertools.count(1)


#: What graphs are opened with: a change of any of these reloads every engine.
Settings = tuple[str, str | None, str | None, int | None]


def settings(e: EngineConfig) -> Settings:
    lib = str(e.qnn_lib_dir) if e.qnn_lib_dir else None
    return (e.backend, lib, e.power, e.threads)


@dataclass(frozen=True)
class BundleKey:
    """What makes two loads of a bundle the same: a reload keeps an engine whose
    key is unchanged.  The manifest pins every file's sha256, so its own hash
    stands for the bundle's content as declared."""

    path: Path
    manifest: str
    engine: str | None
    settings: Settings


@dataclass(frozen=True)
class Checked:
    """A bundle read and verified, not loaded."""

    source: VoiceSource
    bundle: Bundle
    key: BundleKey
    config: EngineConfig  # what its graphs open with

    @classmethod
    def read(cls, source: VoiceSource, e: EngineConfig) -> Checked:
        """One bundle read and (unless ``verify_bundles`` is off) verified."""
        b = Bundle.load(source.bundle)
        if e.verify_bundles:
            problems = verify_bundle(b, binaries=e.backend == "qnn")
            if problems:
                raise BundleError(_named(b, problems))
        manifest = hashlib.sha256((b.root / MANIFEST).read_bytes()).hexdigest()
        path = Path(source.bundle).resolve()
        key = BundleKey(path, manifest, source.engine, settings(e))
        return cls(source, b, key, e)

    def unchanged(self) -> None:
        """BundleError unless every file still hashes as the manifest read then
        says (before loading it again from that manifest)."""
        problems = verify_bundle(self.bundle, binaries=False)
        if problems:
            raise BundleError(_named(self.bundle, problems))

    @property
    def name(self) -> str:
        return self.bundle.name


@dataclass(eq=False)
class LoadedEngine:
    """One bundle's engine, its graphs and the voices it offers."""

    checked: Checked
    engine: Engine
    runners: list[Runner]
    voices: dict[str, Voice]
    graphs: GraphHost
    group: Any  # its qnnrt.ContextGroup (None on the CPU backend)
    status: str
    load: int = field(default_factory=lambda: next(_LOADS))

    @property
    def name(self) -> str:
        return self.checked.name

    def graph_calls(self) -> int:
        return sum(r.stats.calls for r in self.runners)

    def graph_seconds(self) -> float:
        return sum(r.stats.seconds for r in self.runners)

    def close(self) -> None:
        try:
            self.engine.close()
        except Exception:  # noqa: BLE001 - free the graphs anyway; say what failed
            _LOGGER.exception("closing engine %s failed", self.name)
        if self.group is not None:
            self.group.close()
        self.runners.clear()


def _named(b: Bundle, problems: list[str]) -> str:
    """The first problems, each naming the bundle once.  A binary built for
    another HTP comes first: a recompile is the fix, and its I/O mismatches
    (often many) follow from it, so they must not push it out of the line."""
    root = str(b.root)
    ordered = sorted(problems, key=lambda p: not isinstance(p, TargetMismatch))
    shown = [p if p.startswith(root) else f"{root}: {p}" for p in ordered[:_SHOWN]]
    rest = len(ordered) - _SHOWN
    if rest > 0:
        shown.append(f"{rest} more (hexvoice bundle verify {root} lists them all)")
    return "; ".join(shown)
