"""Chaos mode: which faults to inject, drawn from a seeded plan so a run can be replayed.

``--chaos all:seed=7:rate=0.3`` (or ``AGENT_CHAOS``) names a profile and its settings;
`ChaosSpec.parse` reads it and `ChaosPlan` draws, request by request and tool call by tool
call, the fault (or none) each meets. Model requests' faults are acted out by
`providers.adapters.chaos_transport.ChaosTransport` under the real SDK (or, for the offline
model, by `providers.adapters.local_chaos` around llama.cpp's server), so the adapters'
error translation and the whole of `recovery` run as they would in an outage; tool faults by
`tools.chaos` inside the tool executor, under its real timeout and output limit. Nothing
here touches a file, and no fault touches one outside the workspace.

Profiles:
    rate-limits: 429s, half with a retry-after header.
    overload: 529 and 503 bursts (a fault brings two more in a row).
    flaky-network: connections reset before the send, streams cut after the first bytes,
        answers that stall for ``stall`` seconds.
    truncation: answers cut as at the output limit (stop reason ``max_tokens`` /
        ``length``), in their text or inside a tool call's JSON arguments.
    overflow: a context-length error, once, at the first request from number ``turn`` on
        whose conversation holds something compaction can take away (a real server rejects
        a long conversation, never a three-line one).
    outage: the first model of the chain answers 503 for ``seconds`` from the first request.
    tools: tool calls that fail, hang until the tool timeout stops them, or print 1 MB.
    all: every profile above at once.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

PROFILES: dict[str, frozenset[str]] = {
    "rate-limits": frozenset({"rate_limit", "rate_limit_wait"}),
    "overload": frozenset({"overload"}),
    "flaky-network": frozenset({"reset", "cut_stream", "stall"}),
    "truncation": frozenset({"truncate"}),
    "overflow": frozenset({"overflow"}),
    "outage": frozenset({"outage"}),
    "tools": frozenset({"tool_fail", "tool_hang", "tool_flood"}),
}
PROFILES["all"] = frozenset().union(*PROFILES.values())

FLOOD_CHARS = 1_000_000
"""What a flooding tool call prints on top of its real output."""


class FaultKind(StrEnum):
    """One fault a request meets."""

    RATE_LIMIT = "rate_limit"
    RATE_LIMIT_WAIT = "rate_limit_wait"
    OVERLOAD = "overload"
    RESET = "reset"
    CUT_STREAM = "cut_stream"
    STALL = "stall"
    TRUNCATE = "truncate"
    OVERFLOW = "overflow"
    OUTAGE = "outage"
    TOOL_FAIL = "tool_fail"
    TOOL_HANG = "tool_hang"
    TOOL_FLOOD = "tool_flood"


_RANDOM = (
    FaultKind.RATE_LIMIT,
    FaultKind.RATE_LIMIT_WAIT,
    FaultKind.OVERLOAD,
    FaultKind.RESET,
    FaultKind.CUT_STREAM,
    FaultKind.STALL,
    FaultKind.TRUNCATE,
)
"""The kinds drawn at random for a request (overflow and outage come at a chosen request and
time)."""

_TOOL = (FaultKind.TOOL_FAIL, FaultKind.TOOL_HANG, FaultKind.TOOL_FLOOD)
"""The kinds drawn at random for a tool call."""


@dataclass(frozen=True)
class ChaosSpec:
    """A chaos profile and its settings, as ``PROFILE[:key=value]...`` spells them.

    Attributes:
        profile: One of `PROFILES`.
        seed: Seeds the draws: the same seed and the same requests give the same faults.
        rate: Chance that a request (or a tool call) meets a random fault.
        turn: The first request that may get the context-length error (overflow).
        seconds: How long the outage lasts.
        stall: Seconds a stalled answer waits.
        retry_after: Seconds a 429 with retry-after asks for.
    """

    profile: str
    seed: int = 0
    rate: float = 0.3
    turn: int = 3
    seconds: float = 20.0
    stall: float = 2.0
    retry_after: float = 2.0

    @classmethod
    def parse(cls, text: str) -> ChaosSpec:
        """Read ``all:seed=7:rate=0.3``.

        Raises:
            ValueError: an unknown profile or key, or a value of the wrong kind; the message
                says what is accepted.
        """
        name, *settings = [part.strip() for part in text.strip().split(":")]
        if name not in PROFILES:
            known = ", ".join(PROFILES)
            raise ValueError(f"unknown chaos profile {name!r}; use one of: {known}")
        values: dict[str, Any] = {}
        numbers: dict[str, type[int] | type[float]] = {
            "seed": int,
            "rate": float,
            "turn": int,
            "seconds": float,
            "stall": float,
            "retry_after": float,
        }
        for setting in settings:
            key, sep, value = setting.partition("=")
            if not sep or key not in numbers:
                raise ValueError(
                    f"chaos setting {setting!r} is not KEY=VALUE with KEY one of: "
                    + ", ".join(numbers)
                )
            try:
                number = numbers[key](value)
            except ValueError:
                raise ValueError(f"chaos setting {key} wants a number, not {value!r}") from None
            if number < 0 or (key == "rate" and number > 1):
                raise ValueError(f"chaos setting {key}={value} is out of range")
            values[key] = number
        return cls(name, **values)

    def describe(self) -> str:
        """``chaos mode: all (seed 7, rate 0.3)``: what every run under chaos says."""
        return f"chaos mode: {self.profile} (seed {self.seed}, rate {self.rate:g})"


@dataclass(frozen=True)
class InjectedFault:
    """A fault one request (or tool call) met.

    Attributes:
        request: The number of the request, or of the tool call, from 1.
        model: ``provider:model`` for a request, ``tool:NAME`` for a tool call.
        kind: The fault.
    """

    request: int
    model: str
    kind: FaultKind


@dataclass
class ChaosPlan:
    """Draws the fault of each request, in order, from the spec's seed.

    One plan serves every model of the chain, so the order of requests decides the faults:
    the same seed replays the same run. Tool calls draw from a second generator of the same
    seed, so a tool fault never shifts the faults of the requests.
    """

    spec: ChaosSpec
    injected: list[InjectedFault] = field(default_factory=list)
    requests: int = 0
    tool_calls: int = 0
    _outage_from: float | None = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.spec.seed)
        self._tool_rng = random.Random(f"tools:{self.spec.seed}")
        self._kinds = PROFILES[self.spec.profile]
        self._burst = 0
        self._overflowed = False

    def draw(self, model: str, *, primary: bool, now: float, compactable: bool) -> FaultKind | None:
        """The fault the next request to ``model`` meets (None: it goes through).

        ``primary``: the model is the first of the chain (the one an outage takes down).
        ``compactable``: the request's conversation holds something compaction can take
        away (`providers.adapters.chaos_wire.compactable`); only such a request overflows.
        """
        self.requests += 1
        fault = self._choose(primary, now, compactable)
        if fault is not None:
            self.injected.append(InjectedFault(self.requests, model, fault))
        return fault

    def draw_tool(self, tool: str) -> FaultKind | None:
        """The fault the next call of ``tool`` meets (None: it runs as it is)."""
        self.tool_calls += 1
        roll = self._tool_rng.random()
        pick = self._tool_rng.choice(
            [kind for kind in _TOOL if kind.value in self._kinds] or [None]
        )
        if pick is None or roll >= self.spec.rate:
            return None
        self.injected.append(InjectedFault(self.tool_calls, f"tool:{tool}", pick))
        return pick

    @property
    def injects_tool_faults(self) -> bool:
        """Whether the profile injects tool faults."""
        return any(kind.value in self._kinds for kind in _TOOL)

    def _choose(self, primary: bool, now: float, compactable: bool) -> FaultKind | None:
        roll = self._rng.random()  # drawn for every request, so one fault does not shift all
        pick = self._rng.choice([kind for kind in _RANDOM if kind.value in self._kinds] or [None])
        if "outage" in self._kinds and primary:
            if self._outage_from is None:
                self._outage_from = now
            if now - self._outage_from < self.spec.seconds:
                return FaultKind.OUTAGE
        # Once, at the first request from `turn` on that an outage did not take and whose
        # conversation compaction can shrink: a real server rejects a long conversation.
        overflow_due = not self._overflowed and self.requests >= self.spec.turn
        if "overflow" in self._kinds and overflow_due and compactable:
            self._overflowed = True
            return FaultKind.OVERFLOW
        if self._burst > 0:
            self._burst -= 1
            return FaultKind.OVERLOAD
        if pick is None or roll >= self.spec.rate:
            return None
        if pick is FaultKind.OVERLOAD:
            self._burst = 2
        return pick

    def counts(self) -> Counter[FaultKind]:
        """How many of each fault were injected."""
        return Counter(fault.kind for fault in self.injected)


def chaos_start_notice(spec: ChaosSpec) -> str:
    """What a run under chaos says first."""
    tools = " and tool calls" if PROFILES[spec.profile] & {k.value for k in _TOOL} else ""
    return (
        f"{spec.describe()}: faults are injected into this run's model requests{tools} "
        "(files outside the workspace are never touched). A table of faults follows the run."
    )
