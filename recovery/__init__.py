"""Request-level recovery: retries, budget, circuit breaker, model fallback, token escalation.

`RecoveringProvider` wraps a chain of `ModelTarget`s and is itself a `Provider`; the policy
table lives in `recovery.policy`, the events it publishes in `recovery.events`.
"""

from recovery.budget import BreakerState, CircuitBreaker, RetryBudget
from recovery.events import (
    BudgetExhausted,
    CircuitClosed,
    CircuitOpened,
    FallbackActivated,
    GaveUp,
    RecoveryEvent,
    RetryScheduled,
    StreamRestarted,
    TokensEscalated,
)
from recovery.policy import POLICY, Action, CallState, Charge, Decision, KindPolicy, Pace, decide
from recovery.provider import RecoveringProvider, RecoveryStats
from recovery.retry import ModelTarget
from recovery.settings import RecoverySettings

__all__ = [
    "POLICY",
    "Action",
    "BreakerState",
    "BudgetExhausted",
    "CallState",
    "Charge",
    "CircuitBreaker",
    "CircuitClosed",
    "CircuitOpened",
    "Decision",
    "FallbackActivated",
    "GaveUp",
    "KindPolicy",
    "ModelTarget",
    "Pace",
    "RecoveringProvider",
    "RecoveryEvent",
    "RecoverySettings",
    "RecoveryStats",
    "RetryBudget",
    "RetryScheduled",
    "StreamRestarted",
    "TokensEscalated",
    "decide",
]
