"""`idle_guarded`: a wait longer than the limit ends the stream; nothing else does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from providers.adapters.support import StreamIdleTimeout, idle_guarded


async def paced(gaps: list[float]) -> AsyncIterator[int]:
    for n, gap in enumerate(gaps):
        await asyncio.sleep(gap)
        yield n


async def collect(events: AsyncIterator[int], *, pause: float = 0.0) -> list[int]:
    seen = []
    async for item in events:
        seen.append(item)
        if pause:
            await asyncio.sleep(pause)  # the consumer's own time is not the stream's silence
    return seen


async def test_many_quick_events_outlast_the_limit_without_a_timeout() -> None:
    assert await collect(idle_guarded(paced([0.01] * 30), 0.1)) == list(range(30))


async def test_a_slow_consumer_is_not_a_silent_stream() -> None:
    assert await collect(idle_guarded(paced([0.0] * 3), 0.05), pause=0.15) == [0, 1, 2]


async def test_a_silence_after_some_events_times_out() -> None:
    seen: list[int] = []

    async def consume() -> None:
        async for item in idle_guarded(paced([0.0, 0.02, 5.0]), 0.1):
            seen.append(item)

    with pytest.raises(StreamIdleTimeout, match=r"0\.1s"):
        await consume()
    assert seen == [0, 1]


async def test_a_cancellation_from_outside_passes_through() -> None:
    task = asyncio.create_task(collect(idle_guarded(paced([5.0]), 1.0)))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
