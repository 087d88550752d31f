"""Request-level recovery: retries, budget, circuit breaker, model fallback, token escalation.

`RecoveringProvider` wraps a chain of `ModelTarget`s and is itself a `Provider`; the policy
table lives in `recovery.policy`, the events it publishes in `recovery.events`. A `Fleet`
shares recovery state with the other agents on the same key (`recovery.fleet`).
"""

from recovery.budget import BreakerState, CircuitBreaker, RetryBudget
from recovery.call import ModelTarget
from recovery.detour import DetourView
from recovery.events import (
    BudgetExhausted,
    CircuitClosed,
    CircuitOpened,
    FallbackActivated,
    GaveUp,
    ModelRestored,
    RecoveryEvent,
    RequestHeld,
    RetryScheduled,
    StreamRestarted,
    TokensEscalated,
)
from recovery.fleet import Fleet, FleetView, credential_fingerprint
from recovery.policy import POLICY, Action, CallState, Charge, Decision, KindPolicy, Pace, decide
from recovery.provider import RecoveringProvider, RecoveryStats
from recovery.settings import RecoverySettings, SharedSettings
from recovery.usage import UsageLedger

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
    "DetourView",
    "FallbackActivated",
    "Fleet",
    "FleetView",
    "GaveUp",
    "KindPolicy",
    "ModelRestored",
    "ModelTarget",
    "Pace",
    "RecoveringProvider",
    "RecoveryEvent",
    "RecoverySettings",
    "RecoveryStats",
    "RequestHeld",
    "RetryBudget",
    "RetryScheduled",
    "SharedSettings",
    "StreamRestarted",
    "TokensEscalated",
    "UsageLedger",
    "credential_fingerprint",
    "decide",
]
