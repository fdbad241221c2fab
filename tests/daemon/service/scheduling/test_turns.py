"""Engine turns: one holder per engine, FIFO per engine, loads take them all."""

from __future__ import annotations

import asyncio

from daemon.service.scheduling.turns import ALL, Turns


def _granted(*turns) -> list[bool]:  # noqa: ANN002
    return [t.granted.done() for t in turns]


def test_one_holder_per_engine_and_the_next_in_arrival_order():
    async def go() -> None:
        turns = Turns()
        a1, a2, b1, a3 = (turns.ask(k) for k in ("a", "a", "b", "a"))
        assert _granted(a1, a2, b1, a3) == [True, False, True, False]
        turns.done(a1)
        assert _granted(a2, a3) == [True, False]  # first come, first served
        turns.done(a2)
        turns.done(a2)  # idempotent: a3's turn is not given away twice
        assert _granted(a3) == [True]
        assert turns.ask("a").granted.done() is False

    asyncio.run(go())


def test_a_load_waits_for_the_sessions_and_sessions_after_it_wait_for_it():
    async def go() -> None:
        turns = Turns()
        a = turns.ask("a")
        load = turns.ask(ALL)
        b = turns.ask("b")  # asked after the load: behind it, though b is free
        assert _granted(a, load, b) == [True, False, False]
        turns.done(a)
        assert _granted(load, b) == [True, False]
        turns.done(load)
        assert _granted(b) == [True]

    asyncio.run(go())


def test_a_waiter_that_leaves_holds_no_one_up():
    async def go() -> None:
        turns = Turns()
        a = turns.ask("a")
        gone, next_ = turns.ask("a"), turns.ask("a")
        gone.granted.cancel()  # its task was cancelled while it waited
        turns.done(a)
        assert _granted(next_) == [True] and turns.waiting == 0
        withdrawn = turns.ask("a")
        turns.done(withdrawn)  # stops waiting
        turns.done(next_)
        assert turns.ask("a").granted.done()

    asyncio.run(go())


def test_every_turn_as_a_block():
    async def go() -> list[str]:
        turns, said = Turns(), []
        a = turns.ask("a")

        async def load() -> None:
            async with turns.every():
                said.append("load")

        task = asyncio.create_task(load())
        await asyncio.sleep(0.01)
        said.append("session ends")
        turns.done(a)
        await task
        assert turns.ask("a").granted.done()
        return said

    assert asyncio.run(go()) == ["session ends", "load"]
