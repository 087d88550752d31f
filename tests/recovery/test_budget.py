"""The session's retry token bucket and the per-model circuit breaker."""

from __future__ import annotations

from recovery.budget import BreakerState, CircuitBreaker, RetryBudget
from recovery.policy import Charge
from recovery.settings import RecoverySettings
from tests.fakes.clock import VirtualClock


def test_retries_spend_and_successes_refill() -> None:
    budget = RetryBudget(RecoverySettings(budget_capacity=12, retry_cost=5, success_refill=1))
    assert budget.try_spend(Charge.RETRY)
    assert budget.try_spend(Charge.RETRY)
    assert budget.tokens == 2
    assert not budget.try_spend(Charge.RETRY)
    assert budget.tokens == 2  # a refused retry costs nothing
    for _ in range(3):
        budget.refill()
    assert budget.try_spend(Charge.RETRY)


def test_timeouts_cost_more_and_unknown_counts_double() -> None:
    settings = RecoverySettings(retry_cost=5, timeout_cost=10)
    budget = RetryBudget(settings)
    assert budget.cost(Charge.TIMEOUT) == 10
    assert budget.cost(Charge.DOUBLE) == 10
    assert budget.cost(Charge.NONE) == 0


def test_refill_never_exceeds_capacity() -> None:
    budget = RetryBudget(RecoverySettings(budget_capacity=10, success_refill=3))
    budget.refill()
    assert budget.tokens == 10


def test_breaker_opens_after_threshold_and_half_opens_after_cooldown(
    clock: VirtualClock,
) -> None:
    breaker = CircuitBreaker(threshold=3, cooldown=30, clock=clock.now)
    assert not breaker.record_failure()
    assert not breaker.record_failure()
    assert breaker.record_failure()
    assert breaker.state is BreakerState.OPEN
    assert not breaker.allows()
    clock.advance(29)
    assert breaker.reopens_in == 1
    assert not breaker.allows()
    clock.advance(1)
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.allows()


def test_half_open_trial_failure_reopens(clock: VirtualClock) -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=10, clock=clock.now)
    breaker.record_failure()
    breaker.record_failure()
    clock.advance(10)
    assert breaker.record_failure()  # the trial failed: open for another cool-down
    assert breaker.state is BreakerState.OPEN
    assert breaker.reopens_in == 10


def test_success_closes_and_resets_the_count(clock: VirtualClock) -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=10, clock=clock.now)
    breaker.record_failure()
    assert not breaker.record_success()  # was closed already
    assert not breaker.record_failure()  # the count started over
    assert breaker.record_failure()
    clock.advance(10)
    assert breaker.record_success()
    assert breaker.state is BreakerState.CLOSED
