"""The voices a service offers: every bundle's graphs opened as one group, each
bundle's engine loaded on them and warmed up.  Built and closed on the NPU worker
thread only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .bundle import Bundle, BundleError
from .config import ServeConfig
from .engine import Engine, engine_class
from .graphs import GraphHost, Runner
from .jobs import Voice

_LOGGER = logging.getLogger(__name__)


@dataclass
class VoiceSet:
    graphs: GraphHost
    engines: list[Engine] = field(default_factory=list)
    by_voice: dict[str, tuple[Engine, Voice]] = field(default_factory=dict)
    runners: list[Runner] = field(default_factory=list)

    @classmethod
    def open(cls, cfg: ServeConfig) -> VoiceSet:
        """Verify, open (one multi-context group), load and warm up every bundle."""
        e = cfg.engine
        bundles = [Bundle.load(v.bundle) for v in cfg.voices]
        if e.verify_bundles:
            for b in bundles:
                problems = b.verify(binaries=e.backend == "qnn")
                if problems:
                    raise BundleError(f"{b.root}: " + "; ".join(problems[:5]))
        graphs = GraphHost(
            e.backend,
            lib_dir=str(e.qnn_lib_dir) if e.qnn_lib_dir else None,
            power=e.power,
            threads=e.threads,
        )
        vs = cls(graphs)
        try:
            for src, b, runners in zip(cfg.voices, bundles, graphs.open(bundles)):
                engine = engine_class(src.engine or b.engine)()
                vs.engines.append(engine)
                engine.load(b, runners)
                vs.runners.extend(runners.values())
            for engine in vs.engines:
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
        except BaseException:
            vs.close()
            raise
        return vs

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
