"""The one limiter of client-caused log lines, on a real event loop with a
short window (the service's is ``LOG_INTERVAL_S``)."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest

from daemon.service.edge.clientlog import CLIENT_LOG, LOG_INTERVAL_S, ClientLog

#: Short enough for a quick test, far above the loop's timer slack.
WINDOW_S = 0.3
LOGGER = logging.getLogger("tests.clientlog")


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER.name]


def _held(line: str) -> int | None:
    m = re.search(r"\((\d+) similar suppressed in the last [\d.]+ s\)$", line)
    return int(m.group(1)) if m else None


def test_a_burst_is_one_line_then_its_count(caplog):
    caplog.set_level(logging.INFO)
    log = ClientLog(WINDOW_S)

    async def go() -> list[str]:
        for i in range(30):
            log.log(LOGGER, "header", logging.INFO, "header timeout %d", i)
        at_once = _lines(caplog)
        await asyncio.sleep(WINDOW_S * 1.5)
        return at_once

    at_once = asyncio.run(go())
    assert at_once == ["header timeout 0"]
    lines = _lines(caplog)
    # The last line held, said once the window is over, with how many.
    assert len(lines) == 2 and lines[1].startswith("header timeout 29 (")
    assert _held(lines[1]) == 29


def test_kinds_are_limited_apart_and_a_quiet_window_closes_silently(caplog):
    caplog.set_level(logging.INFO)
    log = ClientLog(WINDOW_S)

    async def go() -> None:
        log.log(LOGGER, "a", logging.INFO, "a 1")
        log.log(LOGGER, "b", logging.WARNING, "b 1")  # another kind: said too
        log.log(LOGGER, "a", logging.INFO, "a 2")
        await asyncio.sleep(WINDOW_S * 1.5)  # a's count; b's window closes
        await asyncio.sleep(WINDOW_S * 1.5)  # a's second window, quiet
        log.log(LOGGER, "b", logging.WARNING, "b 2")  # at once: no window open
        log.log(LOGGER, "a", logging.INFO, "a 3")

    asyncio.run(go())
    lines = _lines(caplog)
    assert lines[:2] == ["a 1", "b 1"]
    assert lines[2].startswith("a 2 (") and _held(lines[2]) == 1
    assert lines[3:] == ["b 2", "a 3"]


def test_flush_says_what_is_held(caplog):
    caplog.set_level(logging.INFO)
    log = ClientLog(LOG_INTERVAL_S)

    async def go() -> None:
        for _ in range(3):
            log.log(LOGGER, "x", logging.INFO, "refused")
        log.flush()

    asyncio.run(go())
    lines = _lines(caplog)
    assert lines[0] == "refused" and _held(lines[1]) == 2 and len(lines) == 2


def test_a_window_whose_loop_ended_is_closed_by_the_next_line(caplog):
    caplog.set_level(logging.INFO)
    log = ClientLog(WINDOW_S)

    async def burst() -> None:
        log.log(LOGGER, "x", logging.INFO, "first")
        log.log(LOGGER, "x", logging.INFO, "second")

    asyncio.run(burst())  # its timer dies with the loop
    time.sleep(WINDOW_S * 1.5)
    asyncio.run(burst())
    lines = _lines(caplog)
    # The held line's count, then the new burst's first line is this window's.
    assert lines[0] == "first" and _held(lines[1]) == 1 and len(lines) == 2


def test_lines_below_the_level_cost_nothing(caplog):
    caplog.set_level(logging.WARNING)
    log = ClientLog(WINDOW_S)
    log.log(LOGGER, "x", logging.INFO, "quiet")
    log.log(LOGGER, "x", logging.WARNING, "said")
    assert _lines(caplog) == ["said"]


def test_the_service_has_one_limiter():
    from daemon.protocols.openai import edge
    from daemon.protocols.wyoming import handler
    from daemon.service.edge import admission

    assert admission.CLIENT_LOG is handler.CLIENT_LOG is edge.CLIENT_LOG is CLIENT_LOG
