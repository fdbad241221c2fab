"""An engine loaded in this process for one bundle (no service involved).

The one place that opens a bundle's graphs on a backend, instantiates the engine
registered for it (entry-point group ``hexvoice.engines``) and closes both again;
used by ``hexvoice say --bundle``, benchmarks and tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.graphs import GraphHost, Runner
from daemon.sdk.registry import Engine, engine_for
from daemon.sdk.verify import verify_bundle


class LocalEngine(NamedTuple):
    engine: Engine
    graphs: Mapping[str, Runner]


@contextmanager
def open_engine(
    bundle: Bundle | str | Path,
    backend: str = "qnn",
    *,
    verify: bool = False,
    threads: int | None = None,
    warmup: bool = False,
) -> Iterator[LocalEngine]:
    """Engine + its graphs for ``bundle`` on ``backend``; everything freed on exit."""
    if not isinstance(bundle, Bundle):
        bundle = Bundle.load(bundle)
    if verify:
        problems = verify_bundle(bundle, binaries=False)
        if problems:
            raise BundleError(f"{bundle.root}: " + "; ".join(problems))
    cls = engine_for(bundle)  # an engine of another task refuses the bundle
    host = GraphHost(backend, threads=threads)
    engine: Engine | None = None
    try:
        (graphs,) = host.open([bundle])
        engine = cls()
        engine.load(bundle, graphs)
        if warmup:
            engine.warmup()
        yield LocalEngine(engine, graphs)
    finally:
        if engine is not None:
            engine.close()
        host.close()
