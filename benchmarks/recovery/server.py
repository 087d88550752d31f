"""Simulated model servers: a fault schedule, a latency, and a tally of what they received.

A `SimulatedServer` answers each request after ``latency`` virtual seconds, or fails it
after ``error_latency`` with the `LlmError` its `Fault` returns for that moment. It counts
every request, and every request that arrives before a ``retry-after`` it gave that client
has expired (a violation).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.recovery.simtime import VirtualTime
from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    LlmError,
    Message,
    StopReason,
)

Fault = Callable[[float], LlmError | None]
"""What the server does with a request arriving at a time: an error, or None to answer."""

ANSWER = ChatResponse(
    message=Message.assistant("done"), stop_reason=StopReason.END_TURN, model="sim"
)


def server_error() -> LlmError:
    """An HTTP 500."""
    return LlmError(ErrorKind.SERVER, "internal server error", status=500, provider="sim")


def overloaded() -> LlmError:
    """An HTTP 529 ``overloaded_error`` (no retry-after, as Anthropic sends it)."""
    return LlmError(ErrorKind.OVERLOADED, "overloaded", status=529, provider="sim")


def rate_limited(retry_after: float) -> LlmError:
    """An HTTP 429 with a ``retry-after`` header of ``retry_after`` seconds."""
    return LlmError(
        ErrorKind.RATE_LIMIT, "rate limited", status=429, provider="sim", retry_after=retry_after
    )


def outage(start: float, end: float, error: Callable[[], LlmError] = server_error) -> Fault:
    """Every request in ``[start, end)`` fails with ``error()``; ``end`` may be ``inf``."""
    return lambda now: error() if start <= now < end else None


def rate_limit_window(start: float, end: float) -> Fault:
    """429 in ``[start, end)``, each saying to retry when the window closes (whole seconds)."""
    return lambda now: rate_limited(math.ceil(end - now)) if start <= now < end else None


def bursts(windows: list[tuple[float, float]]) -> Fault:
    """529 inside any of the ``(start, end)`` windows."""
    return lambda now: overloaded() if any(a <= now < b for a, b in windows) else None


def independent(probability: float, rng: random.Random) -> Fault:
    """Each request fails with a 500 with ``probability``, independently."""
    return lambda now: server_error() if rng.random() < probability else None


class Capacity:
    """Admits ``rate`` requests per second (a token bucket holding one second's worth).

    Requests beyond it are refused with 529, as an overloaded provider does.
    """

    def __init__(self, rate: float) -> None:
        self._rate = rate
        self._tokens = rate
        self._last = 0.0

    def __call__(self, now: float) -> LlmError | None:
        self._tokens = min(self._rate, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1.0:
            return overloaded()
        self._tokens -= 1.0
        return None


@dataclass
class Tally:
    """What one server received."""

    requests: int = 0
    violations: int = 0
    by_client: Counter[int] = field(default_factory=Counter)
    busy: Counter[int] = field(default_factory=Counter)
    """Per client: seconds its requests spent at the server (answered or failed)."""


class SimulatedServer:
    """One provider endpoint on virtual time, shared by any number of clients."""

    def __init__(
        self,
        time: VirtualTime,
        fault: Fault,
        *,
        latency: float = 10.0,
        error_latency: float = 0.2,
    ) -> None:
        self.time = time
        self.tally = Tally()
        self._fault = fault
        self._latency = latency
        self._error_latency = error_latency
        self._not_before: dict[int, float] = {}

    def endpoint(self, client: int) -> SimulatedProvider:
        """A `Provider` through which client number ``client`` talks to this server."""
        return SimulatedProvider(self, client)

    async def handle(self, client: int) -> ChatResponse:
        """Answer or fail one request of ``client``, taking the virtual time it takes."""
        now = self.time.now()
        self.tally.requests += 1
        self.tally.by_client[client] += 1
        if now < self._not_before.get(client, -math.inf):
            self.tally.violations += 1
        error = self._fault(now)
        if error is None:
            await self._take(client, self._latency)
            return ANSWER
        if error.retry_after is not None:
            self._not_before[client] = now + error.retry_after
        await self._take(client, self._error_latency)
        raise error

    async def _take(self, client: int, seconds: float) -> None:
        self.tally.busy[client] += seconds
        await self.time.sleep(seconds)


class SimulatedProvider:
    """The `Provider` one client uses to reach a `SimulatedServer`."""

    def __init__(self, server: SimulatedServer, client: int) -> None:
        self._server = server
        self._client = client

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        return await self._server.handle(self._client)
