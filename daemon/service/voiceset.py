"""The voices a service offers: every bundle's graphs opened as one group, each
bundle's engine loaded on them and warmed up.  Built and closed on the NPU worker
thread only.

Loading is two steps so a reload can fail before it touches anything: ``verify``
reads and checks every bundle, ``open`` loads the checked bundles.  ``open``
calls ``checkpoint`` between steps (each graph, engine load and warm-up), which
raises ``LoadStopped`` when the service is stopping.
"""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass, field
from typing import Final

from daemon.engine.bundle import Bundle, BundleError
from daemon.engine.graphs import Checkpoint, GraphHost, Runner, go_on
from daemon.engine.registry import Engine, engine_class
from daemon.service.config import ConfigError, ServeConfig
from daemon.service.jobs import Voice
from qnnrt import QnnError

_LOGGER = logging.getLogger(__name__)
#: QNN codes that mean "no room now", not "this set is broken" (QnnCommon.h,
#: QnnDevice.h): MEM_ALLOC, RESOURCE_UNAVAILABLE, HARDWARE_UNAVAILABLE.
QNN_NO_ROOM: Final = frozenset({1002, 1010, 14002})


class LoadStopped(Exception):
    """The service is stopping: a load gave up between two of its steps."""


def no_room(exc: BaseException) -> bool:
    """Did a load fail for lack of memory or NPU resources (worth retrying with
    the old voices freed), rather than because of the voices themselves?"""
    for e in (exc, exc.__cause__):
        if isinstance(e, MemoryError):
            return True
        if isinstance(e, QnnError) and e.code in QNN_NO_ROOM:
            return True
        if isinstance(e, OSError) and e.errno == errno.ENOMEM:
            return True
    return False


@dataclass
class VoiceSet:
    cfg: ServeConfig
    bundles: list[Bundle]
    graphs: GraphHost
    default: str = ""
    engines: list[Engine] = field(default_factory=list)
    by_voice: dict[str, tuple[Engine, Voice]] = field(default_factory=dict)
    runners: list[Runner] = field(default_factory=list)

    @staticmethod
    def verify(cfg: ServeConfig, checkpoint: Checkpoint = go_on) -> list[Bundle]:
        """Every bundle read and checked; nothing is loaded (BundleError)."""
        e = cfg.engine
        bundles = [Bundle.load(v.bundle) for v in cfg.voices]
        if e.verify_bundles:
            for b in bundles:
                checkpoint()
                problems = b.verify(binaries=e.backend == "qnn")
                if problems:
                    raise BundleError(f"{b.root}: " + "; ".join(problems[:5]))
        return bundles

    @classmethod
    def open(
        cls,
        cfg: ServeConfig,
        bundles: list[Bundle] | None = None,
        checkpoint: Checkpoint = go_on,
    ) -> VoiceSet:
        """Open (one multi-context group), load and warm up the bundles (read and
        verified here unless given, as ``verify`` returned them)."""
        if bundles is None:
            bundles = cls.verify(cfg, checkpoint)
        e = cfg.engine
        graphs = GraphHost(
            e.backend,
            lib_dir=str(e.qnn_lib_dir) if e.qnn_lib_dir else None,
            power=e.power,
            threads=e.threads,
        )
        vs = cls(cfg, bundles, graphs)
        try:
            opened = graphs.open(bundles, checkpoint=checkpoint)
            for src, b, runners in zip(cfg.voices, bundles, opened):
                checkpoint()
                engine = engine_class(src.engine or b.engine)()
                vs.engines.append(engine)
                engine.load(b, runners)
                vs.runners.extend(runners.values())
            for engine in vs.engines:
                checkpoint()
                engine.warmup()
                for v in engine.voices():
                    if v.name in vs.by_voice:
                        raise BundleError(f"voice name {v.name!r} is used twice")
                    voice = Voice(
                        v.name,
                        tuple(v.languages),
                        engine.sample_rate,
                        engine.engine_id,
                        v.description,
                        tuple(v.speakers),
                        tuple(v.attribution),  # type: ignore[arg-type]
                    )
                    vs.by_voice[v.name] = (engine, voice)
            if not vs.by_voice:
                raise BundleError("the bundles offer no voices")
            vs.default = cfg.default_voice or next(iter(vs.by_voice))
            if vs.default not in vs.by_voice:
                raise ConfigError(
                    f"default_voice {vs.default!r} is not one of {sorted(vs.by_voice)}"
                )
            checkpoint()  # stopping during the last warm-up: do not go on serving
            for runner in vs.runners:
                runner.gate = go_on  # loaded: requests stop by their own tokens
        except BaseException:
            vs.close()
            raise
        return vs

    def reopen(self, checkpoint: Checkpoint = go_on) -> VoiceSet:
        """This (closed) set loaded again from the manifests it was loaded with,
        if every file still hashes as they say; never from files changed since."""
        problems = [
            f"{b.root}: {p}" for b in self.bundles for p in b.verify(binaries=False)
        ]
        if problems:
            raise BundleError("; ".join(problems[:5]))
        return VoiceSet.open(self.cfg, self.bundles, checkpoint)

    @property
    def voices(self) -> dict[str, Voice]:
        return {name: v for name, (_, v) in self.by_voice.items()}

    def graph_calls(self) -> int:
        return sum(r.stats.calls for r in self.runners)

    def graph_seconds(self) -> float:
        return sum(r.stats.seconds for r in self.runners)

    def close(self) -> None:
        for engine in self.engines:
            try:
                engine.close()
            except Exception:  # noqa: BLE001 - free the rest anyway; say what failed
                _LOGGER.exception("closing engine %s failed", engine)
        self.engines.clear()
        self.graphs.close()
