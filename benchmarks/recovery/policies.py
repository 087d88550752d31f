"""The policies compared: `RecoveringProvider`, four baselines as people configure them, an oracle.

Each baseline is written from its documented behaviour (sources in BENCHMARKS.md) as a
`Provider` wrapped around the simulated endpoint, so every policy is driven the same way.
Baselines keep no state between calls, as the SDKs and tenacity decorators do not.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.recovery.simtime import VirtualTime
from providers import ChatRequest, ChatResponse, DeltaHandler, LlmError, Provider
from providers.models import ModelLimits, ModelRef
from recovery import ModelTarget, RecoveringProvider, RecoverySettings

Wait = Callable[[int, LlmError, random.Random], float]
"""Seconds to wait after failed attempt number ``attempt`` (1-based)."""

Build = Callable[[Provider, VirtualTime, random.Random], Provider]


@dataclass(frozen=True)
class Policy:
    """A named way of calling a provider: ``build(endpoint, time, rng)`` gives the caller."""

    name: str
    build: Build


class RetryingProvider:
    """Retries transient errors up to ``attempts`` requests per call, waiting ``wait`` between."""

    def __init__(
        self,
        inner: Provider,
        *,
        attempts: int,
        wait: Wait,
        time: VirtualTime,
        rng: random.Random,
    ) -> None:
        self._inner = inner
        self._attempts = attempts
        self._wait = wait
        self._time = time
        self._rng = rng

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._inner.chat(request, on_delta)
            except LlmError as error:
                if not error.kind.transient or attempt >= self._attempts:
                    raise
                await self._time.sleep(self._wait(attempt, error, self._rng))


def sdk_wait(attempt: int, error: LlmError, rng: random.Random) -> float:
    """Anthropic/OpenAI ``_calculate_retry_timeout``: a retry-after in (0, 60] s is obeyed,
    else ``min(0.5 * 2**retries, 8) * (1 - 0.25 * random())``."""
    if error.retry_after is not None and 0 < error.retry_after <= 60:
        return error.retry_after
    return min(0.5 * 2.0 ** (attempt - 1), 8.0) * (1 - 0.25 * rng.random())


def no_wait(attempt: int, error: LlmError, rng: random.Random) -> float:
    """Retry at once."""
    return 0.0


def exponential(attempt: int, error: LlmError, rng: random.Random) -> float:
    """tenacity ``wait_exponential(multiplier=1, max=60)``: 1, 2, 4, ... s, no jitter."""
    return min(2.0 ** (attempt - 1), 60.0)


def random_exponential(attempt: int, error: LlmError, rng: random.Random) -> float:
    """tenacity ``wait_random_exponential(min=1, max=60)``: uniform in [1, min(2**(n-1), 60)]."""
    return rng.uniform(1.0, max(1.0, min(2.0 ** (attempt - 1), 60.0)))


class OracleProvider:
    """Knows when the fault ends: after a failure it waits exactly until then (or the
    server's retry-after, if later) and never gives up. The yardstick for recovery lag."""

    def __init__(self, inner: Provider, *, recovers_at: float, time: VirtualTime) -> None:
        self._inner = inner
        self._recovers_at = recovers_at
        self._time = time

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        while True:
            try:
                return await self._inner.chat(request, on_delta)
            except LlmError as error:
                wait = max(self._recovers_at - self._time.now(), error.retry_after or 0.0)
                await self._time.sleep(wait)


TARGET_REF = ModelRef("sim", "model")
TARGET_LIMITS = ModelLimits(context_window=200_000, max_output_tokens=8_192)


def recovery(settings: RecoverySettings) -> Policy:
    """The real `RecoveringProvider` with one model (the baselines have no fallback either)."""

    def build(endpoint: Provider, time: VirtualTime, rng: random.Random) -> Provider:
        target = ModelTarget(TARGET_REF, endpoint, TARGET_LIMITS)
        return RecoveringProvider(
            [target], settings=settings, clock=time.now, sleep=time.sleep, rng=rng
        )

    return Policy("recovery", build)


def retrying(name: str, attempts: int, wait: Wait) -> Policy:
    """A stateless baseline: ``attempts`` requests per call at most, ``wait`` between them."""

    def build(endpoint: Provider, time: VirtualTime, rng: random.Random) -> Provider:
        return RetryingProvider(endpoint, attempts=attempts, wait=wait, time=time, rng=rng)

    return Policy(name, build)


def oracle(recovers_at: float) -> Policy:
    """The `OracleProvider` for a fault that ends at ``recovers_at``."""

    def build(endpoint: Provider, time: VirtualTime, rng: random.Random) -> Provider:
        return OracleProvider(endpoint, recovers_at=recovers_at, time=time)

    return Policy("oracle", build)


def baselines() -> list[Policy]:
    """The four retry policies a user gets elsewhere, configured as documented."""
    return [
        retrying("sdk default", 3, sdk_wait),
        retrying("naive x5", 5, no_wait),
        retrying("exp no jitter", 6, exponential),
        retrying("tenacity", 6, random_exponential),
    ]
