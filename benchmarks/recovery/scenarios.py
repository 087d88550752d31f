"""The seven scenarios, and running one policy through one of them on virtual time.

A scenario is a fault schedule on one simulated server plus its clients. Each client is
one session (one policy instance, so one `RecoveringProvider` with its own budget and
breaker) that sends its logical requests one after another: request ``k`` is sent at
its arrival time, or when request ``k - 1`` has finished if that is later. A logical
request that the policy gives up on is lost; the client moves on to the next.
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.recovery.policies import Policy
from benchmarks.recovery.server import (
    Capacity,
    Fault,
    SimulatedServer,
    bursts,
    independent,
    outage,
    overloaded,
    rate_limit_window,
)
from benchmarks.recovery.simtime import VirtualTime
from providers import ChatRequest, LlmError, Message, Provider

REQUEST = ChatRequest(messages=[Message.user("next step")])
LATENCY = 10.0
"""Seconds a successful call takes (a typical agent step)."""


@dataclass(frozen=True)
class Scenario:
    """One fault pattern and its workload.

    Attributes:
        key: ``a`` to ``g``.
        title: What happens, for the table.
        fault: Builds a fresh fault schedule from the run's random source.
        clients: Sessions talking to the server.
        interval: Seconds between a session's logical requests (0: one request at t=0).
        horizon: Arrivals stop here.
        recovers_at: When the fault ends, if it ends at a known time (for the oracle).
    """

    key: str
    title: str
    fault: Callable[[random.Random], Fault]
    clients: int
    interval: float
    horizon: float
    recovers_at: float | None = None


@dataclass
class Result:
    """What one policy achieved in one scenario, summed over its sessions."""

    logical: int = 0
    succeeded: int = 0
    requests: int = 0
    violations: int = 0
    give_up: list[float] = field(default_factory=list)
    give_up_waiting: list[float] = field(default_factory=list)
    """Per failed call: its duration less the time its requests took at the server."""
    lag: float = 0.0
    extra_requests: int = 0
    """The most requests any one session sent beyond one per logical request."""
    herd_calls: float = 0.0
    """Requests as a fraction of the no-jitter baseline's (herd scenario only)."""

    @property
    def success(self) -> float:
        return self.succeeded / self.logical if self.logical else 1.0

    @property
    def amplification(self) -> float:
        return self.requests / self.logical if self.logical else 0.0


def _burst_windows(rng: random.Random, horizon: float) -> list[tuple[float, float]]:
    windows, start = [], rng.uniform(20, 60)
    while start < horizon:
        length = rng.uniform(5, 20)
        windows.append((start, start + length))
        start += length + rng.uniform(30, 90)
    return windows


def scenarios(scale: float = 1.0) -> list[Scenario]:
    """The scenarios of the issue; ``scale`` < 1 shrinks client counts and horizons."""

    def n(count: int) -> int:
        return max(1, round(count * scale))

    def span(seconds: float) -> float:
        return max(300.0, seconds * scale)

    return [
        Scenario("a", "outage 60 s, then healthy", lambda r: outage(100, 160), n(20), 15, 300, 160),
        Scenario(
            "b",
            "429 storm 60 s with retry-after",
            lambda r: rate_limit_window(100, 160),
            n(20),
            15,
            300,
            160,
        ),
        Scenario(
            "c",
            "bursts of 529 (5-20 s)",
            lambda r: bursts(_burst_windows(r, span(900))),
            n(20),
            15,
            span(900),
        ),
        Scenario("d", "5% independent 500s", lambda r: independent(0.05, r), n(20), 15, span(900)),
        Scenario(
            "e",
            "hard outage, never ends",
            lambda r: outage(0, math.inf, overloaded),
            n(5),
            15,
            span(3600),
        ),
        Scenario("f", "herd: 100 clients, 10 req/s", lambda r: Capacity(10), n(100), 0, 0),
        Scenario(
            "g",
            "429 with retry-after 1 h",
            lambda r: rate_limit_window(60, 3660),
            n(5),
            60,
            7200,
            3660,
        ),
    ]


def run(scenario: Scenario, policy: Policy, seed: int) -> Result:
    """Run ``policy`` through ``scenario`` deterministically from ``seed``."""
    return asyncio.run(_run(scenario, policy, seed))


async def _run(scenario: Scenario, policy: Policy, seed: int) -> Result:
    rng = random.Random(f"{scenario.key}-{seed}")
    time = VirtualTime()
    server = SimulatedServer(time, scenario.fault(random.Random(rng.random())), latency=LATENCY)
    result = Result()
    sessions = []
    for client in range(scenario.clients):
        # Same phases for every policy; each session draws its own jitter.
        phase = rng.uniform(0, scenario.interval)
        count = (
            math.ceil((scenario.horizon - phase) / scenario.interval) if scenario.interval else 1
        )
        arrivals = [phase + k * scenario.interval for k in range(count)]
        caller = policy.build(server.endpoint(client), time, random.Random(rng.random()))
        sessions.append(
            functools.partial(
                _session, caller, arrivals, time, scenario.recovers_at, result, server, client
            )
        )
    logical = await time.run(sessions)
    result.requests = server.tally.requests
    result.violations = server.tally.violations
    extra = [server.tally.by_client[client] - count for client, count in enumerate(logical)]
    result.extra_requests = max(0, *extra)
    return result


async def _session(
    caller: Provider,
    arrivals: list[float],
    time: VirtualTime,
    recovers_at: float | None,
    result: Result,
    server: SimulatedServer,
    client: int,
) -> int:
    lag: float | None = None
    for arrival in arrivals:
        if arrival > time.now():
            await time.sleep(arrival - time.now())
        start, busy = time.now(), server.tally.busy[client]
        result.logical += 1
        try:
            await caller.chat(REQUEST)
        except LlmError:
            result.give_up.append(time.now() - start)
            result.give_up_waiting.append(time.now() - start - server.tally.busy[client] + busy)
            continue
        result.succeeded += 1
        sent = time.now() - LATENCY
        if recovers_at is not None and lag is None and sent >= recovers_at - 1e-9:
            lag = time.now() - recovers_at
    if recovers_at is not None:
        result.lag += lag if lag is not None else math.inf
    return len(arrivals)
