"""A virtual clock: `sleep` advances time instantly, so waiting policies test in microseconds."""

from __future__ import annotations

import asyncio


class VirtualClock:
    """Monotonic time that only moves when someone sleeps on it.

    Pass ``clock.now`` where code expects ``clock: Callable[[], float]`` and ``clock.sleep``
    where it expects ``sleep: Callable[[float], Awaitable[None]]``.
    """

    def __init__(self, start: float = 1_000.0) -> None:
        self._now = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self._now += max(0.0, seconds)
        # Yield so cancellation delivered during a "sleep" is observed, as with asyncio.sleep.
        await asyncio.sleep(0)

    @property
    def total_slept(self) -> float:
        return sum(self.sleeps)
