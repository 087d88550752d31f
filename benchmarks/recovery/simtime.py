"""Virtual time for many concurrent clients: a discrete-event scheduler on asyncio.

Every simulated client is an asyncio task that waits only by ``await time.sleep(s)``.
When every task is parked on the clock, `VirtualTime.run` jumps the clock to the earliest
pending wake-up and resumes exactly that sleeper; ties wake in the order they were
scheduled. Nothing really sleeps, and the same inputs give the same run every time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


class VirtualTime:
    """A shared clock for simulated clients and servers.

    Pass ``time.now`` where code expects ``clock`` and ``time.sleep`` where it expects
    ``sleep``; then drive the clients with `run`.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._wakeups: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._running = 0
        self._all_parked = asyncio.Event()

    def now(self) -> float:
        """Seconds of virtual time."""
        return self._now

    async def sleep(self, seconds: float) -> None:
        """Park the calling task until the clock reaches ``now + seconds``."""
        wakeup = asyncio.get_running_loop().create_future()
        heapq.heappush(self._wakeups, (self._now + max(seconds, 0.0), next(self._order), wakeup))
        self._park()
        await wakeup

    async def run(self, clients: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run ``clients`` concurrently until all return; their results, in order."""
        self._running = len(clients)
        self._all_parked.clear()
        tasks = [asyncio.create_task(self._client(client)) for client in clients]
        while tasks:
            await self._all_parked.wait()
            self._all_parked.clear()
            if not self._wakeups:
                break
            when, _, wakeup = heapq.heappop(self._wakeups)
            self._now = max(self._now, when)
            self._running += 1
            wakeup.set_result(None)
        return [task.result() for task in tasks]

    async def _client(self, client: Callable[[], Awaitable[T]]) -> T:
        try:
            return await client()
        finally:
            self._park()

    def _park(self) -> None:
        self._running -= 1
        if self._running == 0:
            self._all_parked.set()
