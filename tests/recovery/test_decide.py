"""`decide` as a pure function: one row per rule, breaker, budget and holds included."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from providers import ChatRequest, ChatResponse, DeltaHandler, ErrorKind, LlmError, Purpose
from providers.testing import FunctionProvider
from recovery import RecoverySettings
from recovery.policy import Action, CallState, Decision, decide
from tests.recovery.support import REQUEST, Recorder, target

SETTINGS = RecoverySettings(
    max_retry_wait=60.0, max_total_wait=180.0, retry_cost=5.0, timeout_cost=10.0
)
START = CallState(0, 0.0, 0, Purpose.FOREGROUND, has_fallback=True)
FAILED = replace(START, attempt=1)


def error(kind: ErrorKind, retry_after: float | None = None) -> LlmError:
    return LlmError(kind, "boom", provider="anthropic", model="m", retry_after=retry_after)


@dataclass(frozen=True)
class Row:
    """One input and the decision it must give (``reason`` is a substring)."""

    name: str
    error: LlmError | None
    state: CallState
    action: Action
    reason: str = ""
    expect: dict[str, Any] = field(default_factory=dict)


ROWS = [
    # Before a send: the breaker, then what holds the request back.
    Row("nothing holds it back", None, START, Action.SEND),
    Row("pacing is waited out", None, replace(START, held=3.0), Action.WAIT, "", {"delay": 3.0}),
    Row(
        "a short server wait is waited out",
        None,
        replace(START, held=30.0, held_by_server=True),
        Action.WAIT,
        "",
        {"delay": 30.0},
    ),
    Row(
        "a shared wait longer than max_retry_wait falls back",
        None,
        replace(START, held=90.0, held_by_server=True),
        Action.FALL_BACK,
        "server asked to wait 90s",
        {"retry_after": 90.0},
    ),
    Row(
        "pacing beyond the call's total wait falls back",
        None,
        replace(START, waited=170.0, held=20.0),
        Action.FALL_BACK,
        "rate limit: next slot in 20s",
        {"retry_after": 20.0},
    ),
    Row(
        "an open breaker skips the model",
        None,
        replace(START, breaker_open=12.0),
        Action.FALL_BACK,
        "skipped: failing repeatedly, next trial in 12s",
        {"retry_after": 12.0},
    ),
    Row(
        "an open breaker skips even the only model",
        None,
        replace(START, breaker_open=12.0, has_fallback=False),
        Action.FALL_BACK,
        "skipped",
    ),
    # After a failure: the kind, attempts and waits, then the breaker, then the budget.
    Row("a server error is retried", error(ErrorKind.SERVER), FAILED, Action.RETRY),
    Row(
        "an open breaker moves on to the next model",
        error(ErrorKind.SERVER),
        replace(FAILED, breaker_open=20.0),
        Action.FALL_BACK,
        "failing repeatedly",
        {"retry_after": 20.0},
    ),
    Row(
        "an open breaker does not end a call with no other model",
        error(ErrorKind.SERVER),
        replace(FAILED, breaker_open=20.0, has_fallback=False),
        Action.RETRY,
    ),
    Row(
        "an exhausted budget falls back",
        error(ErrorKind.SERVER),
        replace(FAILED, budget_left=4.0),
        Action.FALL_BACK,
        "retry budget used up",
        {"budget_exhausted": True},
    ),
    Row(
        "a budget holding exactly the cost pays",
        error(ErrorKind.SERVER),
        replace(FAILED, budget_left=5.0),
        Action.RETRY,
    ),
    Row(
        "a timeout costs more",
        error(ErrorKind.TIMEOUT),
        replace(FAILED, budget_left=9.0),
        Action.FALL_BACK,
        "retry budget used up",
    ),
    Row(
        "an unknown error costs double",
        error(ErrorKind.UNKNOWN),
        replace(FAILED, budget_left=9.0),
        Action.FALL_BACK,
        "retry budget used up",
    ),
    Row(
        "the breaker is read before the budget",
        error(ErrorKind.SERVER),
        replace(FAILED, breaker_open=20.0, budget_left=0.0),
        Action.FALL_BACK,
        "failing repeatedly",
        {"budget_exhausted": False},
    ),
    Row(
        "a server wait longer than max_retry_wait falls back, whatever the budget",
        error(ErrorKind.RATE_LIMIT, retry_after=90.0),
        replace(FAILED, budget_left=0.0),
        Action.FALL_BACK,
        "server asked to wait 90s",
        {"retry_after": 90.0, "budget_exhausted": False},
    ),
    Row(
        "a kind never retried ignores breaker and budget",
        error(ErrorKind.AUTH),
        replace(FAILED, breaker_open=20.0, budget_left=0.0),
        Action.FALL_BACK,
        "auth is not retried",
        {"budget_exhausted": False, "retry_after": None},
    ),
    Row(
        "a bad request is raised even with the budget empty",
        error(ErrorKind.BAD_REQUEST),
        replace(FAILED, budget_left=0.0),
        Action.RAISE,
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_decide(row: Row) -> None:
    decision = decide(row.error, row.state, SETTINGS, jitter=0.5)

    assert decision.action is row.action
    assert row.reason in decision.reason
    for name, value in row.expect.items():
        assert getattr(decision, name) == value, name


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_decide_is_pure(row: Row) -> None:
    decisions = {decide(row.error, row.state, SETTINGS, jitter=0.25) for _ in range(3)}
    assert len(decisions) == 1
    assert isinstance(decisions.pop(), Decision)


def test_cancellation_is_not_an_error_decide_can_be_given() -> None:
    assert not issubclass(asyncio.CancelledError, LlmError)
    assert not any("cancel" in kind.value for kind in ErrorKind)


async def test_a_cancelled_request_is_never_counted_as_a_failure(rec: Recorder) -> None:
    started = asyncio.Event()

    async def hang(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    # One failure would open this breaker, and any retry would take from the budget.
    recovering = rec.provider(target("anthropic:a", FunctionProvider(hang)), breaker_threshold=1)
    task = asyncio.create_task(recovering.chat(REQUEST))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)

    stats = recovering.stats()
    assert stats.open_circuits == ()
    assert stats.budget_tokens == RecoverySettings().budget_capacity
    assert (stats.retries, stats.fallbacks, stats.gave_up) == (0, 0, 0)
