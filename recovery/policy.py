"""The retry policy: a table keyed by `ErrorKind` and pure functions that read it.

`decide` is the one place that chooses what a call does next: send a request, wait, retry
after a delay, fall back to the next model, or raise at once. It has no state of its own and
draws no random numbers: the caller gathers everything it reads into a `CallState` (attempts,
time waited, the model's breaker, the retry budget left, what holds the next request back)
and passes a jitter value in ``[0, 1)``, so every rule is testable with plain values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from providers import ErrorKind, LlmError, Purpose
from recovery.settings import RecoverySettings


class Charge(StrEnum):
    """What a retry costs the session's retry budget."""

    NONE = "none"
    RETRY = "retry"
    TIMEOUT = "timeout"
    DOUBLE = "double"


class Pace(StrEnum):
    """How fast the backoff of a kind grows.

    ``PROBE``: ``base_backoff`` doubling to ``probe_backoff``. A server that errors or drops
    connections is usually back within a minute; asking again every few seconds (the
    retry budget bounds how long) resumes work soon after it is.
    ``SPREAD``: ``overload_backoff`` doubling to ``max_backoff``. A server shedding load
    recovers only if its clients spread their retries over more than a second or two.
    """

    PROBE = "probe"
    SPREAD = "spread"


class Action(StrEnum):
    """What a call does next.

    Before a request: ``SEND`` it now, ``WAIT`` for ``delay`` and look again, or
    ``FALL_BACK``. After a failed one: ``RETRY`` after ``delay``, ``FALL_BACK`` to the next
    model, or ``RAISE`` the error at once.
    """

    SEND = "send"
    WAIT = "wait"
    RETRY = "retry"
    FALL_BACK = "fall_back"
    RAISE = "raise"


@dataclass(frozen=True)
class KindPolicy:
    """How one `ErrorKind` is handled.

    Attributes:
        retry: Send the same request to the same model again (after a backoff).
        fall_back: Never retry on this model; move to the next model in the chain.
        honour_server_wait: Wait exactly what the server asked for, when it said.
        floor: Apply ``rate_limit_floor`` to the wait.
        charge: What a retry costs the retry budget.
        overload: Counts towards the consecutive-overload fallback.
        model_fault: The model (not the request) failed: counts against its circuit breaker.
        pace: How fast the backoff grows.
        window: Retried every `WINDOW_PACE` seconds only while the call has waited less
            than this; then the next model (an endpoint where nothing answers at all).
    """

    retry: bool
    fall_back: bool
    honour_server_wait: bool = False
    floor: bool = False
    charge: Charge = Charge.NONE
    overload: bool = False
    model_fault: bool = False
    pace: Pace = Pace.PROBE
    window: float | None = None


UNREACHABLE_WINDOW = 10.0
"""Seconds an endpoint where nothing answers (refused, no such host, no route) is tried
again, every `WINDOW_PACE`, before the call moves on: a server being started is used as
soon as it listens; a dead one fails within seconds, not after a minute of backoff."""
WINDOW_PACE = 1.0
NOT_FIXED_BY_WAITING = "tls"
"""The ``server_type`` of an unreachable endpoint that waiting does not fix (TLS failed)."""


_TRANSIENT = KindPolicy(
    retry=True, fall_back=False, honour_server_wait=True, charge=Charge.RETRY, model_fault=True
)
_NEXT_MODEL = KindPolicy(retry=False, fall_back=True, model_fault=True)
_RAISE = KindPolicy(retry=False, fall_back=False)

POLICY: Mapping[ErrorKind, KindPolicy] = {
    # A rate limit says nothing about the model's health, so it never opens a breaker.
    ErrorKind.RATE_LIMIT: KindPolicy(
        retry=True,
        fall_back=False,
        honour_server_wait=True,
        floor=True,
        charge=Charge.RETRY,
        pace=Pace.SPREAD,
    ),
    ErrorKind.OVERLOADED: KindPolicy(
        retry=True,
        fall_back=False,
        honour_server_wait=True,
        charge=Charge.RETRY,
        overload=True,
        model_fault=True,
        pace=Pace.SPREAD,
    ),
    ErrorKind.SERVER: _TRANSIENT,
    ErrorKind.TIMEOUT: KindPolicy(
        retry=True, fall_back=False, charge=Charge.TIMEOUT, model_fault=True
    ),
    ErrorKind.CONNECTION: KindPolicy(
        retry=True, fall_back=False, charge=Charge.RETRY, model_fault=True
    ),
    ErrorKind.UNKNOWN: KindPolicy(
        retry=True, fall_back=False, honour_server_wait=True, charge=Charge.DOUBLE, model_fault=True
    ),
    ErrorKind.AUTH: _NEXT_MODEL,
    ErrorKind.PERMISSION: _NEXT_MODEL,
    ErrorKind.QUOTA: _NEXT_MODEL,
    ErrorKind.NOT_FOUND: _NEXT_MODEL,
    # No charge and no breaker: a refused connection costs the server nothing, and the
    # window bounds the tries.
    ErrorKind.UNREACHABLE: KindPolicy(retry=True, fall_back=False, window=UNREACHABLE_WINDOW),
    # The loop compacts on overflow; a bad request or a refusal fails the same way anywhere.
    ErrorKind.CONTEXT_OVERFLOW: _RAISE,
    ErrorKind.BAD_REQUEST: _RAISE,
    ErrorKind.REFUSAL: _RAISE,
}


@dataclass(frozen=True)
class CallState:
    """Where one call stands on its current model, gathered before each decision.

    The defaults of the last four fields are what holds when they were not gathered: the
    caller reads the breaker when a call comes to a model and after each failure, the budget
    after each failure, and the hold before each send.

    Attributes:
        attempt: Requests sent to this model in this call (after a failure, the failed
            one included).
        waited: Seconds this call has already spent waiting.
        consecutive_overloads: Overloads in a row on this model, the failed one included.
        purpose: Who is waiting for the call.
        has_fallback: Whether another model is left to try.
        breaker_open: Seconds the model is still skipped because it kept failing, in this
            session or (with a fleet) for any agent, the latest failure counted (0: not).
        budget_left: Retry tokens left: the session's, or the fleet's when that is lower.
        held: Seconds before the next request may go: a server's wait (told to this
            session or, through the fleet, to another agent) or the fleet's pacing.
        held_by_server: Whether ``held`` is a server's wait rather than pacing.
    """

    attempt: int
    waited: float
    consecutive_overloads: int
    purpose: Purpose
    has_fallback: bool
    breaker_open: float = 0.0
    budget_left: float = math.inf
    held: float = 0.0
    held_by_server: bool = False


@dataclass(frozen=True)
class Decision:
    """The outcome of `decide`.

    Attributes:
        action: Retry, fall back or raise.
        reason: Why, in a few words for the person (``"3 overloads in a row"``).
        delay: Seconds to wait before the retry.
        charge: What the retry costs the budget.
        retry_after: For a fallback: seconds until the model may accept requests again,
            if known.
        budget_exhausted: The fallback is because the retry budget cannot pay for a retry.
        unavailable: For a fallback before a send: the kind of unavailability (an open
            breaker, a server's wait learned from another agent), which no error of this
            call may say.
    """

    action: Action
    reason: str
    delay: float = 0.0
    charge: Charge = Charge.NONE
    retry_after: float | None = None
    budget_exhausted: bool = False
    unavailable: ErrorKind | None = None


def backoff_delay(
    attempt: int, settings: RecoverySettings, jitter: float, pace: Pace = Pace.PROBE
) -> float:
    """Capped exponential backoff with full jitter.

    Args:
        attempt: Requests already sent (1 before the first retry).
        settings: Supplies the first and largest caps of each pace.
        jitter: A uniform draw from ``[0, 1)``.
        pace: Which caps to use.

    Returns:
        A wait in ``[0, min(largest, first * 2**(attempt-1)))``, where ``first`` and
        ``largest`` are the pace's caps, neither above ``max_backoff``.
    """
    first, largest = backoff_caps(pace, settings)
    exponent = min(max(attempt - 1, 0), 62)
    return min(largest, first * 2.0**exponent) * jitter


def backoff_caps(pace: Pace, settings: RecoverySettings) -> tuple[float, float]:
    """The first and the largest backoff cap of ``pace``."""
    if pace is Pace.SPREAD:
        first, largest = settings.overload_backoff, settings.max_backoff
    else:
        first, largest = settings.base_backoff, settings.probe_backoff
    largest = min(largest, settings.max_backoff)
    return min(first, largest), largest


def overload_threshold(purpose: Purpose, settings: RecoverySettings) -> int:
    """Consecutive overloads after which a call stops using a model."""
    if purpose is Purpose.BACKGROUND:
        return settings.background_overload_fallback_after
    return settings.overload_fallback_after


def charge_cost(charge: Charge, settings: RecoverySettings) -> float:
    """The retry tokens a retry of class ``charge`` takes from the budget."""
    costs = {
        Charge.NONE: 0.0,
        Charge.RETRY: settings.retry_cost,
        Charge.TIMEOUT: settings.timeout_cost,
        Charge.DOUBLE: 2 * settings.retry_cost,
    }
    return costs[charge]


def decide(
    error: LlmError | None, state: CallState, settings: RecoverySettings, jitter: float
) -> Decision:
    """Decide what a call does next. Pure: same inputs, same decision.

    Args:
        error: The request that just failed; None before a request is sent.
        state: Where the call stands, gathered just before.
        settings: The limits on attempts, waits and fallbacks.
        jitter: A uniform draw from ``[0, 1)`` for the backoff (unused before a send).

    Returns:
        Before a send: `Action.SEND`, `Action.WAIT` or `Action.FALL_BACK`. After a failure:
        `Action.RETRY`, `Action.FALL_BACK` or `Action.RAISE`.
    """
    if not settings.enabled:
        # Recovery off: the request goes now, and its error is the call's, as it came.
        return Decision(Action.SEND if error is None else Action.RAISE, "recovery is off")
    if error is None:
        return _before_send(state, settings)
    decision = _after_failure(error, state, settings, jitter)
    if decision.action is not Action.RETRY:
        return decision
    # With no other model, an open breaker does not end the call: it goes on at the kind's
    # pace, bounded by the budget and max_total_wait, and answers once the model is back.
    # New calls still skip (or fail fast) while the breaker is open.
    if state.breaker_open > 0 and state.has_fallback:
        return Decision(Action.FALL_BACK, "failing repeatedly", retry_after=state.breaker_open)
    if charge_cost(decision.charge, settings) > state.budget_left:
        return Decision(Action.FALL_BACK, "retry budget used up", budget_exhausted=True)
    return decision


def _before_send(state: CallState, settings: RecoverySettings) -> Decision:
    if state.breaker_open > 0:
        note = f"skipped: failing repeatedly, next trial in {state.breaker_open:.0f}s"
        return Decision(
            Action.FALL_BACK,
            note,
            retry_after=state.breaker_open,
            unavailable=ErrorKind.OVERLOADED,
        )
    if state.held <= 0:
        return Decision(Action.SEND, "nothing holds it back")
    too_long = state.held_by_server and state.held > settings.max_retry_wait
    if too_long or state.waited + state.held > settings.max_total_wait:
        what = "server asked to wait" if state.held_by_server else "rate limit: next slot in"
        return Decision(
            Action.FALL_BACK,
            f"{what} {state.held:.0f}s",
            retry_after=state.held,
            unavailable=ErrorKind.RATE_LIMIT,
        )
    return Decision(Action.WAIT, "held back", delay=state.held)


def _after_failure(
    error: LlmError, state: CallState, settings: RecoverySettings, jitter: float
) -> Decision:
    """What the kind, the attempts and the waits say, before the breaker and the budget."""
    policy = POLICY[error.kind]
    if not policy.retry:
        action = Action.FALL_BACK if policy.fall_back else Action.RAISE
        return Decision(action, f"{error.kind.value} is not retried")
    if policy.window is not None:
        if error.server_type == NOT_FIXED_BY_WAITING:
            return Decision(Action.FALL_BACK, f"{error.kind.value}: waiting does not fix it")
        if state.waited >= policy.window:
            return Decision(Action.FALL_BACK, f"{error.kind.value} for {state.waited:.0f}s")
    overloads = state.consecutive_overloads
    # Without another model a foreground call keeps retrying; background work gives up.
    if (
        policy.overload
        and overloads >= overload_threshold(state.purpose, settings)
        and (state.has_fallback or state.purpose is Purpose.BACKGROUND)
    ):
        return Decision(Action.FALL_BACK, f"{overloads} overloads in a row")
    if state.attempt >= settings.max_attempts:
        return Decision(Action.FALL_BACK, f"still failing after {state.attempt} attempts")
    delay = _wait(error, state.attempt, settings, jitter)
    server_wait = policy.honour_server_wait and error.retry_after is not None
    if server_wait and delay > settings.max_retry_wait:
        return Decision(Action.FALL_BACK, f"server asked to wait {delay:.0f}s", retry_after=delay)
    if state.waited + delay > settings.max_total_wait:
        return Decision(
            Action.FALL_BACK,
            f"still failing after {state.attempt} attempts over {state.waited:.0f}s",
        )
    return Decision(Action.RETRY, f"{error.kind.value}", delay=delay, charge=policy.charge)


def _wait(error: LlmError, attempt: int, settings: RecoverySettings, jitter: float) -> float:
    policy = POLICY[error.kind]
    if policy.window is not None:
        return WINDOW_PACE
    if policy.honour_server_wait and error.retry_after is not None:
        delay = max(error.retry_after, 0.0)
    else:
        delay = backoff_delay(attempt, settings, jitter, policy.pace)
    if policy.floor:
        delay = max(delay, settings.rate_limit_floor)
    return delay
