"""An in-process engine host for the service tests (real worker, real graphs)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from daemon.service.config import ServeConfig
from daemon.service.edge.metrics import Metrics
from daemon.service.host import EngineHost


def with_limits(cfg: ServeConfig, **limits: Any) -> ServeConfig:
    """``cfg`` with some ``limits`` fields replaced."""
    return replace(cfg, limits=replace(cfg.limits, **limits))


async def loaded_host(cfg: ServeConfig) -> EngineHost:
    """A host with ``cfg``'s voices loaded (close it with ``await host.close()``)."""
    host = EngineHost(cfg, Metrics())
    await host.load(cfg)
    return host
