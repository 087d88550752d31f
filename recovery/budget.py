"""Session-wide limits on retrying: a retry token bucket and per-model circuit breakers."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from recovery.policy import Charge, charge_cost
from recovery.settings import RecoverySettings


class RetryBudget:
    """A token bucket shared by every call of a session.

    Retries take tokens (timeouts more, unknown errors double), successful calls put a few
    back. When the bucket cannot pay for a retry, the retry is not made: a long outage
    degrades to failing fast instead of hammering the API.
    """

    def __init__(self, settings: RecoverySettings) -> None:
        self._settings = settings
        self._tokens = settings.budget_capacity

    @property
    def tokens(self) -> float:
        """Tokens left in the bucket."""
        return self._tokens

    def cost(self, charge: Charge) -> float:
        """What a retry of class ``charge`` takes from the bucket."""
        return charge_cost(charge, self._settings)

    def try_spend(self, charge: Charge) -> bool:
        """Take the cost of one retry if the bucket holds it; report whether it did."""
        cost = self.cost(charge)
        if cost > self._tokens:
            return False
        self._tokens -= cost
        return True

    def refill(self) -> None:
        """Credit a successful call (never above the capacity)."""
        self._tokens = min(
            self._settings.budget_capacity, self._tokens + self._settings.success_refill
        )


class BreakerState(StrEnum):
    """Where a circuit breaker stands."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Skips a model after ``threshold`` consecutive failed requests, for ``cooldown`` seconds.

    After the cool-down the breaker is half-open: requests go through, and the next one
    decides: a success closes it, a failure opens it again for another cool-down.
    """

    def __init__(self, threshold: int, cooldown: float, clock: Callable[[], float]) -> None:
        self._threshold = threshold
        self._cooldown = cooldown
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None

    @property
    def state(self) -> BreakerState:
        """Closed, open, or half-open once the cool-down has passed."""
        if self._opened_at is None:
            return BreakerState.CLOSED
        if self._clock() >= self._opened_at + self._cooldown:
            return BreakerState.HALF_OPEN
        return BreakerState.OPEN

    @property
    def reopens_in(self) -> float:
        """Seconds until an open breaker lets a trial request through (0 if it does now)."""
        if self._opened_at is None:
            return 0.0
        return max(0.0, self._opened_at + self._cooldown - self._clock())

    @property
    def failures(self) -> int:
        """Consecutive failed requests so far."""
        return self._failures

    def allows(self) -> bool:
        """Whether a request may be sent to the model now."""
        return self.state is not BreakerState.OPEN

    def record_success(self) -> bool:
        """Note a success; return True if this closed an open or half-open breaker."""
        was_open = self._opened_at is not None
        self._failures = 0
        self._opened_at = None
        return was_open

    def record_failure(self) -> bool:
        """Note a failed request; return True if this opened (or re-opened) the breaker."""
        self._failures += 1
        half_open = self.state is BreakerState.HALF_OPEN
        if half_open or (self._opened_at is None and self._failures >= self._threshold):
            self._opened_at = self._clock()
            return True
        return False
