"""Ctrl-C between prompts, with real signals: it stops the work, never the REPL."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from agent.terminal.interrupts import Interrupts


@pytest.fixture(autouse=True)
def _sigint_restored() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


async def _forever() -> str:
    await asyncio.Event().wait()
    return "never"


async def _sigint_soon() -> None:
    await asyncio.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)


async def test_ctrl_c_during_the_work_cancels_it_and_nothing_else() -> None:
    interrupts = Interrupts()
    interrupts.arm()
    sender = asyncio.create_task(_sigint_soon())
    assert await interrupts.run(_forever()) is None
    await sender
    assert await interrupts.run(asyncio.sleep(0, result="next")) == "next"


async def test_ctrl_c_before_the_work_starts_stops_that_work() -> None:
    interrupts = Interrupts()
    interrupts.arm()  # the prompt returned
    os.kill(os.getpid(), signal.SIGINT)  # the person pressed Ctrl-C right after Enter
    await asyncio.sleep(0.05)  # delivered, with no work under way: no KeyboardInterrupt
    assert await interrupts.run(_forever()) is None


async def test_an_interrupt_from_before_the_last_prompt_is_forgotten() -> None:
    interrupts = Interrupts()
    interrupts.arm()
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.sleep(0.05)
    interrupts.arm()  # the person typed a new line since
    assert await interrupts.run(asyncio.sleep(0, result="ran")) == "ran"


async def test_sigint_given_back_by_a_picker_is_taken_again_by_the_next_work() -> None:
    interrupts = Interrupts()
    interrupts.arm()
    asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)  # as a prompt leaves it
    sender = asyncio.create_task(_sigint_soon())
    assert await interrupts.run(_forever()) is None
    await sender


async def test_the_repl_being_cancelled_is_not_taken_for_ctrl_c() -> None:
    interrupts = Interrupts()
    interrupts.arm()
    outer = asyncio.create_task(interrupts.run(_forever()))
    await asyncio.sleep(0.01)
    outer.cancel()  # SIGTERM or SIGHUP: the whole REPL ends
    with pytest.raises(asyncio.CancelledError):
        await outer
