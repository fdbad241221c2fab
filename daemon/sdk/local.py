"""An engine loaded in this process for one bundle (no service involved).

The one place that opens a bundle's graphs on a backend, instantiates the engine
registered for it (entry-point group ``hexvoice.engines``) and closes both again;
used by ``hexvoice say --bundle``, benchmarks and tests.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from daemon.sdk.bundles.manifest import Bundle, BundleError
from daemon.sdk.graphs import GraphHost, Runner
from daemon.sdk.license import check_accepted
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
    accept_licenses: Collection[str] = (),
) -> Iterator[LocalEngine]:
    """Engine + its graphs for ``bundle`` on ``backend``; everything freed on
    exit.  ``accept_licenses``: the licences the user accepted (an engine under
    one not among them refuses before anything loads, license.py)."""
    if not isinstance(bundle, Bundle):
        bundle = Bundle.load(bundle)
    if verify:
        problems = verify_bundle(bundle, binaries=False)
        if problems:
            raise BundleError(f"{bundle.root}: " + "; ".join(problems))
    cls = engine_for(bundle)  # an engine of another task refuses the bundle
    check_accepted(cls, bundle, accept_licenses)
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
