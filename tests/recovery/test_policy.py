"""The policy table and `decide`, row by row, with plain values."""

from __future__ import annotations

import random

import pytest

from providers import ErrorKind, LlmError, Purpose
from recovery.policy import (
    NOT_FIXED_BY_WAITING,
    POLICY,
    UNREACHABLE_WINDOW,
    Action,
    CallState,
    Charge,
    Pace,
    backoff_delay,
    decide,
)
from recovery.settings import RecoverySettings

SETTINGS = RecoverySettings()


def state(
    attempt: int = 1,
    waited: float = 0.0,
    overloads: int = 0,
    purpose: Purpose = Purpose.FOREGROUND,
    has_fallback: bool = True,
) -> CallState:
    return CallState(attempt, waited, overloads, purpose, has_fallback)


def error(kind: ErrorKind, retry_after: float | None = None) -> LlmError:
    return LlmError(kind, "boom", provider="anthropic", model="m", retry_after=retry_after)


def test_every_kind_has_a_row() -> None:
    assert set(POLICY) == set(ErrorKind)


def test_table_agrees_with_the_taxonomy_on_what_is_transient() -> None:
    for kind, row in POLICY.items():
        # An unreachable endpoint is tried only within its short window, never backed off.
        assert row.retry == kind.transient or row.window is not None, kind


def test_an_unreachable_endpoint_is_tried_every_second_within_its_window() -> None:
    down = error(ErrorKind.UNREACHABLE)
    tls = LlmError(ErrorKind.UNREACHABLE, "TLS", server_type=NOT_FIXED_BY_WAITING)

    tries = [decide(down, state(attempt=n, waited=n - 1.0), SETTINGS, 0.5) for n in range(1, 11)]
    after = decide(down, state(attempt=11, waited=UNREACHABLE_WINDOW), SETTINGS, 0.5)

    assert {(d.action, d.delay, d.charge) for d in tries} == {(Action.RETRY, 1.0, Charge.NONE)}
    assert (after.action, after.reason) == (Action.FALL_BACK, "unreachable for 10s")
    assert decide(tls, state(), SETTINGS, 0.5).action is Action.FALL_BACK  # waiting won't fix it
    assert not POLICY[ErrorKind.UNREACHABLE].model_fault


@pytest.mark.parametrize(
    ("kind", "charge"),
    [
        (ErrorKind.RATE_LIMIT, Charge.RETRY),
        (ErrorKind.OVERLOADED, Charge.RETRY),
        (ErrorKind.SERVER, Charge.RETRY),
        (ErrorKind.TIMEOUT, Charge.TIMEOUT),
        (ErrorKind.CONNECTION, Charge.RETRY),
        (ErrorKind.UNKNOWN, Charge.DOUBLE),
    ],
)
def test_transient_kinds_are_retried_with_their_charge(kind: ErrorKind, charge: Charge) -> None:
    decision = decide(error(kind), state(), SETTINGS, jitter=0.5)
    assert decision.action is Action.RETRY
    assert decision.charge is charge


@pytest.mark.parametrize(
    "kind", [ErrorKind.AUTH, ErrorKind.PERMISSION, ErrorKind.QUOTA, ErrorKind.NOT_FOUND]
)
def test_model_problems_fall_back_without_retrying(kind: ErrorKind) -> None:
    decision = decide(error(kind, retry_after=1.0), state(), SETTINGS, jitter=0.5)
    assert decision.action is Action.FALL_BACK
    assert decision.delay == 0


@pytest.mark.parametrize(
    "kind", [ErrorKind.CONTEXT_OVERFLOW, ErrorKind.BAD_REQUEST, ErrorKind.REFUSAL]
)
def test_request_problems_are_raised_at_once(kind: ErrorKind) -> None:
    decision = decide(error(kind), state(), SETTINGS, jitter=0.5)
    assert decision.action is Action.RAISE


def test_only_model_faults_count_against_the_breaker() -> None:
    faults = {kind for kind, row in POLICY.items() if row.model_fault}
    assert ErrorKind.RATE_LIMIT not in faults
    assert not faults & {ErrorKind.CONTEXT_OVERFLOW, ErrorKind.BAD_REQUEST, ErrorKind.REFUSAL}
    assert {ErrorKind.OVERLOADED, ErrorKind.AUTH, ErrorKind.TIMEOUT} <= faults


def test_backoff_is_capped_exponential_with_full_jitter() -> None:
    settings = RecoverySettings(base_backoff=1.0, probe_backoff=4.0, max_backoff=8.0)
    caps = [backoff_delay(n, settings, jitter=0.999999) for n in range(1, 7)]
    assert caps == pytest.approx([1, 2, 4, 4, 4, 4], rel=1e-5)
    assert backoff_delay(3, settings, jitter=0.0) == 0.0


def test_overloads_spread_out_from_a_larger_first_cap() -> None:
    settings = RecoverySettings(overload_backoff=8.0, max_backoff=32.0)
    caps = [backoff_delay(n, settings, 0.999999, Pace.SPREAD) for n in range(1, 6)]
    assert caps == pytest.approx([8, 16, 32, 32, 32], rel=1e-5)
    assert POLICY[ErrorKind.OVERLOADED].pace is Pace.SPREAD
    assert POLICY[ErrorKind.RATE_LIMIT].pace is Pace.SPREAD
    assert POLICY[ErrorKind.SERVER].pace is Pace.PROBE


def test_max_backoff_caps_every_pace() -> None:
    settings = RecoverySettings(base_backoff=0.2, max_backoff=0.4)
    for pace in Pace:
        assert backoff_delay(1, settings, 0.999999, pace) <= 0.4
        assert backoff_delay(9, settings, 0.999999, pace) <= 0.4


def test_jittered_waits_stay_within_bounds_and_spread() -> None:
    rng = random.Random(7)
    settings = RecoverySettings(base_backoff=1.0, probe_backoff=32.0, max_backoff=32.0)
    for attempt in range(1, 10):
        cap = min(32.0, 2.0 ** (attempt - 1))
        delays = [
            decide(error(ErrorKind.SERVER), state(attempt), settings, rng.random()).delay
            for _ in range(200)
        ]
        assert all(0 <= d < cap for d in delays)
        assert max(delays) - min(delays) > cap / 2  # full jitter, not a fixed wait


def test_server_wait_is_honoured_exactly() -> None:
    decision = decide(error(ErrorKind.OVERLOADED, retry_after=7.25), state(), SETTINGS, 0.1)
    assert decision.action is Action.RETRY
    assert decision.delay == 7.25


def test_rate_limit_wait_has_a_floor() -> None:
    settings = RecoverySettings(rate_limit_floor=3.0)
    hinted = decide(error(ErrorKind.RATE_LIMIT, retry_after=0.2), state(), settings, 0.5)
    unhinted = decide(error(ErrorKind.RATE_LIMIT), state(), settings, 0.0)
    longer = decide(error(ErrorKind.RATE_LIMIT, retry_after=20.0), state(), settings, 0.0)
    assert (hinted.delay, unhinted.delay, longer.delay) == (3.0, 3.0, 20.0)


def test_server_wait_beyond_max_retry_wait_falls_back_and_says_when() -> None:
    settings = RecoverySettings(max_retry_wait=60.0)
    decision = decide(error(ErrorKind.RATE_LIMIT, retry_after=600.0), state(), settings, 0.5)
    assert decision.action is Action.FALL_BACK
    assert decision.retry_after == 600.0
    assert "600s" in decision.reason


def test_attempts_are_capped() -> None:
    settings = RecoverySettings(max_attempts=4)
    assert decide(error(ErrorKind.SERVER), state(3), settings, 0.5).action is Action.RETRY
    assert decide(error(ErrorKind.SERVER), state(4), settings, 0.5).action is Action.FALL_BACK


def test_total_wait_per_call_is_capped() -> None:
    settings = RecoverySettings(max_total_wait=30.0)
    near = state(waited=25.0)
    assert decide(error(ErrorKind.SERVER, retry_after=4.0), near, settings, 0.5).delay == 4.0
    over = decide(error(ErrorKind.SERVER, retry_after=6.0), near, settings, 0.5)
    assert over.action is Action.FALL_BACK


def test_consecutive_overloads_move_to_the_next_model() -> None:
    settings = RecoverySettings(overload_fallback_after=3)
    overloaded = error(ErrorKind.OVERLOADED)
    assert decide(overloaded, state(2, overloads=2), settings, 0.5).action is Action.RETRY
    assert decide(overloaded, state(3, overloads=3), settings, 0.5).action is Action.FALL_BACK


def test_without_another_model_foreground_keeps_retrying_overloads() -> None:
    settings = RecoverySettings(overload_fallback_after=3)
    alone = state(3, overloads=3, has_fallback=False)
    assert decide(error(ErrorKind.OVERLOADED), alone, settings, 0.5).action is Action.RETRY


def test_background_gives_up_on_overload_sooner() -> None:
    settings = RecoverySettings(overload_fallback_after=3, background_overload_fallback_after=1)
    overloaded = error(ErrorKind.OVERLOADED)
    for has_fallback in (True, False):
        bg = state(1, overloads=1, purpose=Purpose.BACKGROUND, has_fallback=has_fallback)
        fg = state(1, overloads=1, purpose=Purpose.FOREGROUND, has_fallback=has_fallback)
        assert decide(overloaded, bg, settings, 0.5).action is Action.FALL_BACK
        assert decide(overloaded, fg, settings, 0.5).action is Action.RETRY


def test_settings_reject_inverted_backoff() -> None:
    with pytest.raises(ValueError, match="max_backoff"):
        RecoverySettings(base_backoff=10, max_backoff=1)
