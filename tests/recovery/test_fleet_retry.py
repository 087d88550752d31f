"""Two agents on one key, through a shared file store: what one learns, the other honours."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from providers import ErrorKind, Event, LlmError, Provider
from providers.lazy import LazyProvider
from providers.ratelimit import Headroom, RateLimits
from providers.testing import ScriptedProvider, text
from recovery import ModelTarget, RecoveringProvider, RecoverySettings, RequestHeld
from recovery.fleet import Fleet
from recovery.fleet.file_store import FileStore
from recovery.fleet.store import ProcessStore
from recovery.settings import SharedSettings
from tests.fakes.clock import VirtualClock
from tests.recovery.support import REQUEST, fail, target


def agent(
    fleet: Fleet,
    clock: VirtualClock,
    *chain: ModelTarget,
    events: list[Event] | None = None,
    **settings: Any,
) -> RecoveringProvider:
    return RecoveringProvider(
        chain,
        settings=RecoverySettings(**settings),
        events=events.append if events is not None else None,
        clock=clock.now,
        sleep=clock.sleep,
        rng=random.Random(1),
        fleet=fleet,
    )


def shared_fleet(tmp_path: Path, clock: VirtualClock, **settings: Any) -> Fleet:
    return Fleet(FileStore(tmp_path), RecoverySettings(**settings), clock=clock.now)


def test_a_retry_after_told_to_one_agent_holds_back_the_other(
    tmp_path: Path, clock: VirtualClock
) -> None:
    first_api = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, retry_after=20.0), text("one")])
    second_api = ScriptedProvider([text("two")])
    seen: list[Event] = []
    first = agent(shared_fleet(tmp_path, clock), clock, target("anthropic:m", first_api))
    second = agent(
        shared_fleet(tmp_path, clock), clock, target("anthropic:m", second_api), events=seen
    )

    asyncio.run(first.chat(REQUEST))
    # The first agent slept the 20 s; rewind, as if the second started just after the 429.
    clock.advance(-20)
    clock.sleeps.clear()
    answer = asyncio.run(second.chat(REQUEST))

    assert answer.message.text == "two"
    assert clock.sleeps == [pytest.approx(20.0)]
    [held] = [event for event in seen if isinstance(event, RequestHeld)]  # the person is told
    assert held.server
    assert held.other_agent
    assert held.delay == pytest.approx(20.0)
    assert held.describe() == (
        "anthropic:m: waiting 20s: the API asked another agent on this key to slow down"
    )


def test_the_shared_state_is_read_after_the_sdk_is_imported(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """Another agent's retry-after that arrives while this one imports its SDK still holds
    this agent's first request back."""
    told = shared_fleet(tmp_path, clock)
    api = ScriptedProvider([text("after the wait")])

    def build() -> Provider:
        # The import takes a while; meanwhile another agent on the key gets a 429.
        told.server_wait(target("anthropic:m", api).fleet_key, 4.0)
        return api

    seen: list[Event] = []
    lazy = target("anthropic:m", LazyProvider(build, "anthropic:m"))
    answer = asyncio.run(
        agent(shared_fleet(tmp_path, clock), clock, lazy, events=seen).chat(REQUEST)
    )

    assert answer.message.text == "after the wait"
    assert clock.sleeps == [pytest.approx(4.0)]
    [held] = [event for event in seen if isinstance(event, RequestHeld)]
    assert held.other_agent


def test_agents_on_other_keys_or_models_are_not_held(tmp_path: Path, clock: VirtualClock) -> None:
    first_api = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, retry_after=20.0), text("one")])
    first = agent(shared_fleet(tmp_path, clock), clock, target("anthropic:m", first_api))
    asyncio.run(first.chat(REQUEST))
    clock.advance(-20)
    clock.sleeps.clear()

    other_model = target("anthropic:n", ScriptedProvider([text("n")]))
    other_key = ModelTarget(
        target("anthropic:m", ScriptedProvider([text("k")])).ref,
        ScriptedProvider([text("k")]),
        other_model.limits,
        account="another-key",
    )
    for chain in (other_model, other_key):
        asyncio.run(agent(shared_fleet(tmp_path, clock), clock, chain).chat(REQUEST))

    assert clock.sleeps == []


def test_headroom_reported_to_one_agent_paces_the_other(
    tmp_path: Path, clock: VirtualClock
) -> None:
    drained = RateLimits(requests=Headroom(limit=10, remaining=0, reset_in=5.0))
    first_api = ScriptedProvider([text("one").model_copy(update={"rate_limits": drained})])
    first_fleet = shared_fleet(tmp_path, clock)
    first = agent(first_fleet, clock, target("anthropic:m", first_api))
    seen: list[Event] = []
    second = agent(
        shared_fleet(tmp_path, clock),
        clock,
        target("anthropic:m", ScriptedProvider([text("two")])),
        events=seen,
    )

    asyncio.run(first.chat(REQUEST))
    first_fleet.flush()  # as the agent does when it closes (or its loop, 50 ms on)
    asyncio.run(second.chat(REQUEST))

    assert clock.sleeps == [pytest.approx(0.5)]  # one request's worth of refill at 2/s
    assert not any(isinstance(e, RequestHeld) for e in seen)  # too short to mention


def test_a_model_failing_for_one_agent_is_skipped_by_the_other(
    tmp_path: Path, clock: VirtualClock
) -> None:
    failing = [fail(ErrorKind.SERVER) for _ in range(3)]
    first = agent(
        shared_fleet(tmp_path, clock, breaker_threshold=3),
        clock,
        target("anthropic:m", ScriptedProvider([*failing, text("late")])),
        target("anthropic:backup", ScriptedProvider([text("backup one")])),
        breaker_threshold=3,
    )
    asyncio.run(first.chat(REQUEST))
    primary = ScriptedProvider([])
    second = agent(
        shared_fleet(tmp_path, clock, breaker_threshold=3),
        clock,
        target("anthropic:m", primary),
        target("anthropic:backup", ScriptedProvider([text("backup two")])),
        breaker_threshold=3,
    )

    answer = asyncio.run(second.chat(REQUEST))

    assert answer.message.text == "backup two"
    assert primary.requests == []
    assert [view.breaker_open > 0 for view in second.stats().fleet] == [False, True]


def test_the_fleet_shares_one_retry_budget(tmp_path: Path, clock: VirtualClock) -> None:
    settings = {"budget_capacity": 10.0, "retry_cost": 5.0, "success_refill": 0.0}
    errors: list[LlmError] = [fail(ErrorKind.SERVER) for _ in range(2)]
    first = agent(
        shared_fleet(tmp_path, clock, **settings),
        clock,
        target("anthropic:m", ScriptedProvider([*errors, text("one")])),
        **settings,
    )
    asyncio.run(first.chat(REQUEST))
    second = agent(
        shared_fleet(tmp_path, clock, **settings),
        clock,
        target("anthropic:m", ScriptedProvider([fail(ErrorKind.SERVER)])),
        **settings,
    )

    with pytest.raises(LlmError, match="retry budget used up"):
        asyncio.run(second.chat(REQUEST))


def test_alone_the_session_budget_decides(clock: VirtualClock) -> None:
    fleet = Fleet(ProcessStore(), RecoverySettings(), clock=clock.now)

    assert fleet.try_spend("k", 10_000.0)
    assert fleet.views() == []


def test_with_no_other_model_an_agent_still_tries_a_model_the_fleet_saw_failing(
    tmp_path: Path, clock: VirtualClock
) -> None:
    failing = [fail(ErrorKind.SERVER) for _ in range(3)]
    first = agent(
        shared_fleet(tmp_path, clock, breaker_threshold=3),
        clock,
        target("anthropic:m", ScriptedProvider(failing)),
        target("anthropic:backup", ScriptedProvider([text("backup")])),
        breaker_threshold=3,
    )
    asyncio.run(first.chat(REQUEST))
    alone = agent(
        shared_fleet(tmp_path, clock, breaker_threshold=3),
        clock,
        target("anthropic:m", ScriptedProvider([text("back again")])),
        breaker_threshold=3,
    )

    assert asyncio.run(alone.chat(REQUEST)).message.text == "back again"


async def test_a_long_request_keeps_its_slot_renewed_until_it_ends(tmp_path: Path) -> None:
    settings = RecoverySettings(shared=SharedSettings(max_concurrent=1))
    fleet = Fleet(FileStore(tmp_path), settings)
    key = fleet.key("anthropic", "acct", "m")
    assert fleet.acquire(key, 10).seconds == 0
    started = fleet.store.snapshot()[key]["inflight"][fleet.holder]

    stop = fleet.keep_alive(key, every=0.01)
    await asyncio.sleep(0.1)
    stop()
    renewed = fleet.store.snapshot()[key]["inflight"][fleet.holder]
    await asyncio.sleep(0.05)

    assert renewed > started
    assert fleet.store.snapshot()[key]["inflight"][fleet.holder] == renewed  # stopped
