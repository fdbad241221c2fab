"""A Wyoming client for the protocol tests: connected with a read timeout (so
a hang fails fast), read up to the event a step waits for, and the service's
``info`` (the one event a ``describe`` is answered with)."""

from __future__ import annotations

from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe, Info

from tests.daemon.conftest import Daemon


async def connect(d: Daemon, read_timeout: float) -> AsyncClient:
    c = AsyncClient.from_uri(d.uri)
    c.read_timeout = read_timeout
    await c.connect()
    return c


async def until(c: AsyncClient, *types: str) -> list[Event]:
    """Events up to and including the first of ``types``."""
    out = []
    while True:
        e = await c.read_event()
        assert e is not None, f"connection closed after {[x.type for x in out]}"
        out.append(e)
        if e.type in types:
            return out


async def describe(d: Daemon, read_timeout: float) -> Info:
    """The service's answer to ``describe``: one ``info`` event, nothing else."""
    c = await connect(d, read_timeout)
    await c.write_event(Describe().event())
    (e,) = await until(c, "info")
    await c.disconnect()
    return Info.from_event(e)
