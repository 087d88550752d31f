"""How a turn ended: its status, its result, the event that says so, and a prompt too long.

These are what the REPL, ``-p``, the session and the loop agree on; they import nothing of
the loop itself. `TurnStatus` is defined in `sessions` (a session file keeps it) and is
re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from providers import ErrorKind, Event, Usage
from recovery import (
    BudgetExhausted,
    CircuitClosed,
    CircuitOpened,
    FallbackActivated,
    GaveUp,
    ModelRestored,
    RequestHeld,
    RetryScheduled,
    StreamRestarted,
    TokensEscalated,
)
from sessions import TurnStatus

__all__ = ["PromptTooLong", "TurnEnded", "TurnResult", "TurnStatus"]


class PromptTooLong(Exception):
    """The person's prompt alone does not fit the model's context window.

    Compaction cannot help (it never shortens the prompt), so the turn ends with this
    message instead of sending, or compacting, in vain.
    """

    def __init__(
        self, *, model: str, window: int, prompt_tokens: int, rejected: bool = False
    ) -> None:
        self.model = model
        self.window = window
        self.prompt_tokens = prompt_tokens
        size = (
            f"the model rejected it as larger than its context window of {window:,} tokens "
            f"(about {prompt_tokens:,} tokens by our estimate)"
            if rejected
            else f"about {prompt_tokens:,} tokens, and the model's context window is "
            f"{window:,} tokens"
        )
        super().__init__(
            f"The prompt is too long for {model}: {size}. Trim the input, choose a model with "
            "a larger window with --model, or save the input to a file and ask the agent to "
            "read it in parts."
        )


class TurnEnded(Event):
    """A turn finished, one way or another."""

    type: Literal["turn_ended"] = "turn_ended"
    status: TurnStatus
    steps: int
    error: str | None = None

    def describe(self) -> str:
        return f"Turn {self.status.value} after {self.steps} step(s)" + (
            f": {self.error}" if self.error else ""
        )


class SubagentStarted(Event):
    """A `task` call started a child (``agent_id``: its transcript's session id)."""

    type: Literal["subagent_started"] = "subagent_started"
    agent_id: str
    agent_type: str
    description: str
    tool_use_id: str

    def describe(self) -> str:
        return f"Sub-agent {self.agent_type} started: {self.description}"


class SubagentProgress(Event):
    """A child took a step: the tool it runs now ("" while it thinks), its tokens so far."""

    type: Literal["subagent_progress"] = "subagent_progress"
    agent_id: str
    tool_use_id: str
    tool: str
    tokens: int

    def describe(self) -> str:
        return f"Sub-agent {self.agent_id}: {self.tool or 'thinking'}, {self.tokens} tokens"


class SubagentFinished(Event):
    """A child ended, one way or another: one summary line of what it did."""

    type: Literal["subagent_finished"] = "subagent_finished"
    agent_id: str
    agent_type: str
    description: str
    tool_use_id: str
    status: TurnStatus
    steps: int
    tool_calls: int
    tokens: int
    seconds: float
    transcript_path: str = ""
    error: str | None = None
    call_result: str = ""
    """The `task` call's result (an interrupted child's too: what it did), kept so a session
    resumed after a crash still has it."""
    call_is_error: bool = False

    def describe(self) -> str:
        what = "done" if self.status is TurnStatus.DONE else f"stopped ({self.status.value})"
        return (
            f"Sub-agent {self.agent_type} {what}: {self.description} — {self.steps} turn(s), "
            f"{self.tool_calls} tool call(s), {self.tokens} tokens, {self.seconds:.1f}s"
        )


@dataclass(frozen=True)
class ChildId:
    """Which child: its transcript's session id, its kind, and the `task` call that started it."""

    agent_id: str
    agent_type: str
    tool_use_id: str


class ChildsRecovery(Event):
    """What recovery did for a child's request, told as the child's: `SubagentSwitch` (a
    child on a model of its own moved along the chain) or `SubagentRecovery` (a retry, a
    wait, giving up, ...). ``inner`` is the recovery event itself."""

    agent_id: str
    agent_type: str
    tool_use_id: str

    @property
    def inner(self) -> Event:
        raise NotImplementedError

    def describe(self) -> str:
        return f"Sub-agent {self.agent_type}: {self.inner.describe()}"


class SubagentSwitch(ChildsRecovery):
    """A child on a model of its own (its definition's ``model``) moved along the chain.

    The session's own model did not move: this is the child's, never the session's
    `FallbackActivated` or `ModelRestored` (those are recorded as the session's model, which
    a resumed session goes on with).
    """

    switch: FallbackActivated | ModelRestored

    @property
    def inner(self) -> Event:
        return self.switch


class SubagentFallback(SubagentSwitch):
    """A child's model could not answer: the child goes on with the next model of the chain."""

    type: Literal["subagent_fallback"] = "subagent_fallback"
    switch: FallbackActivated


class SubagentModelRestored(SubagentSwitch):
    """The model a child fell back from answered a trial: the children are back on it."""

    type: Literal["subagent_model_restored"] = "subagent_model_restored"
    switch: ModelRestored


ChildsRequestEvent = (
    RetryScheduled
    | RequestHeld
    | TokensEscalated
    | StreamRestarted
    | BudgetExhausted
    | CircuitOpened
    | CircuitClosed
    | GaveUp
)
"""Recovery's events about one request (not a move of the model a provider is on)."""


class SubagentRecovery(ChildsRecovery):
    """Recovery at work on a child's request: its retry, its wait, its give-up. The parent's
    turn is not waiting, nor failed: only the child is (its `task` result says how it ended).
    """

    type: Literal["subagent_recovery"] = "subagent_recovery"
    recovery: ChildsRequestEvent = Field(discriminator="type")

    @property
    def inner(self) -> Event:
        return self.recovery


def subagent_switch(child: ChildId, switch: FallbackActivated | ModelRestored) -> SubagentSwitch:
    """``switch``, made inside ``child``, as the event that names the child."""
    who = {"agent_id": child.agent_id, "agent_type": child.agent_type}
    if isinstance(switch, FallbackActivated):
        return SubagentFallback(**who, tool_use_id=child.tool_use_id, switch=switch)
    return SubagentModelRestored(**who, tool_use_id=child.tool_use_id, switch=switch)


class SideModelSwitch(Event):
    """``small_model``'s provider (side requests: web_fetch's answer over a page, web_search)
    moved along its chain, or came back to ``small_model``.

    The session's own model did not move: this is never the session's `FallbackActivated` or
    `ModelRestored` (those are recorded as the session's model, which a resumed session goes
    on with). ``switch.purpose`` says which side request moved it.
    """

    type: Literal["side_model_switch"] = "side_model_switch"
    switch: FallbackActivated | ModelRestored = Field(discriminator="type")

    @property
    def tags(self) -> dict[str, str]:
        """What tells this switch from the session's where both are reported (stream-json,
        the Recovery hook): the model's role, and the side request that moved it."""
        return {"model_role": "small_model", "purpose": self.switch.purpose.value}

    def describe(self) -> str:
        return f"small_model ({self.switch.purpose.value}): {self.switch.describe()}"


def unwrapped(events: Iterable[Event]) -> list[Event]:
    """``events`` with each child's recovery event in place of the event that names the
    child: what recovery did for the whole tree (counts, ``/stats``, the chaos report)."""
    return [event.inner if isinstance(event, ChildsRecovery) else event for event in events]


@dataclass
class TurnResult:
    """What a turn produced: the final answer text, or why there is none."""

    status: TurnStatus
    answer: str = ""
    error: str | None = None
    error_kind: ErrorKind | None = None
    retry_after: float | None = None
    """For a provider that cannot answer now: seconds until it said it may, if it said."""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
