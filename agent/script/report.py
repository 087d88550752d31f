"""What a run did, summed up from the engine's stream for the final ``result``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.engine.outcome import ChildsRecovery, SubagentSwitch, TurnResult, TurnStatus
from agent.setup.session_start import WorkspaceMoved
from providers import ErrorKind, Event, Message, StreamDelta, ToolResultBlock, ToolUseBlock
from recovery import FallbackActivated, GaveUp, ModelRestored, RetryScheduled
from tools import CheckpointRecorded, CommandChangedFiles, RolledBack, UndoApplied
from tools.events import ToolRefused

UNAVAILABLE = frozenset(
    {
        ErrorKind.RATE_LIMIT,
        ErrorKind.OVERLOADED,
        ErrorKind.SERVER,
        ErrorKind.TIMEOUT,
        ErrorKind.CONNECTION,
        ErrorKind.UNREACHABLE,
    }
)
"""Failures that say "the provider cannot answer now", not "the task failed": a script
should try again later (exit 75, ``error_provider_unavailable``)."""


def provider_unavailable(result: TurnResult | None) -> bool:
    """Whether the run failed because no model could be reached, after every retry."""
    return (
        result is not None
        and result.status is TurnStatus.FAILED
        and result.error_kind in UNAVAILABLE
    )


def result_subtype(status: TurnStatus, result: TurnResult | None) -> str:
    """Claude Code's ``result`` subtype for how the run ended."""
    if status is TurnStatus.DONE:
        return "success"
    if status in (TurnStatus.MAX_STEPS, TurnStatus.REPEATED_CALL):
        return "error_max_turns"
    if provider_unavailable(result):
        return "error_provider_unavailable"
    return "error_during_execution"


def _switched(event: FallbackActivated | ModelRestored) -> dict[str, str]:
    """A ``fallbacks`` entry: the model left, the model taken, and why."""
    if isinstance(event, FallbackActivated):
        return {"from": event.from_model, "to": event.to_model, "reason": event.reason}
    return {"from": event.from_model, "to": event.model, "reason": "primary restored"}


class RunReport:
    """Listens to a run (as a `Face`) and keeps what its result reports."""

    def __init__(self, workspace: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self._workspace = workspace
        self._clock = clock
        self.started = clock()
        self.turns = 0
        self.tool_calls = 0
        self.retries = 0
        """Every retry of the run, its sub-agents' too: each was a request sent again."""
        self.retry_after: float | None = None
        """Seconds the server asked to wait, when the parent's last request gave up on it (a
        sub-agent's give-up ends that child only)."""
        self.fallbacks: list[dict[str, str]] = []
        self.workspace_moved: WorkspaceMoved | None = None
        """Where a resumed session was started, and where it works now, if it moved."""
        self.permission_denials: list[dict[str, Any]] = []
        self._changed: dict[str, None] = {}
        self._calls: dict[str, ToolUseBlock] = {}

    @property
    def changed_files(self) -> list[str]:
        """Files the run created, changed or deleted (and did not put back), in order."""
        return list(self._changed)

    def duration_ms(self) -> int:
        return round((self._clock() - self.started) * 1000)

    def on_event(self, event: Event) -> None:
        if isinstance(event, WorkspaceMoved):
            self.workspace_moved = event
        elif isinstance(event, RetryScheduled) or (
            isinstance(event, ChildsRecovery) and isinstance(event.inner, RetryScheduled)
        ):
            self.retries += 1
        elif isinstance(event, GaveUp):
            self.retry_after = event.retry_after
        elif isinstance(event, FallbackActivated | ModelRestored):
            self.fallbacks.append(_switched(event))
        elif isinstance(event, SubagentSwitch):
            self.fallbacks.append(
                _switched(event.switch)
                | {
                    "agent_type": event.agent_type,
                    "agent_id": event.agent_id,
                    "parent_tool_use_id": event.tool_use_id,
                }
            )
        elif isinstance(event, CheckpointRecorded):
            self._changed[self._relative(event.path)] = None
        elif isinstance(event, CommandChangedFiles):
            for path in event.paths:
                self._changed[self._relative(path)] = None
        elif isinstance(event, RolledBack | UndoApplied):
            for path in event.restored:
                self._changed.pop(self._relative(path), None)
        elif isinstance(event, ToolRefused):
            call = self._calls.get(event.tool_use_id)
            self.permission_denials.append(
                {
                    "tool_name": event.tool,
                    "tool_use_id": event.tool_use_id,
                    "tool_input": call.input if call is not None else {},
                    "reason": event.reason,
                }
            )

    def _relative(self, path: str) -> str:
        """``path`` as the person names it: relative to the workspace when inside it."""
        try:
            return str(Path(path).relative_to(self._workspace))
        except ValueError:
            return path

    def on_delta(self, delta: StreamDelta) -> None:
        pass

    def on_message(self, message: Message) -> None:
        if message.role == "assistant":
            self.turns += 1
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    self._calls[block.id] = block

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self.tool_calls += 1

    def fields(self) -> dict[str, Any]:
        """The run's figures, as ``result`` and the JSON output carry them."""
        return {
            "num_turns": self.turns,
            "duration_ms": self.duration_ms(),
            "tool_calls": self.tool_calls,
            "changed_files": self.changed_files,
            "permission_denials": self.permission_denials,
            "retries": self.retries,
            "fallbacks": self.fallbacks,
        } | self._moved()

    def _moved(self) -> dict[str, Any]:
        moved = self.workspace_moved
        if moved is None:
            return {}
        return {"workspace_moved": {"started_in": moved.started_in, "cwd": moved.workspace}}
