"""Events the tool layer emits: the session log keeps them, ``/stats`` counts them."""

from __future__ import annotations

import logging
from typing import ClassVar, Literal

from pydantic import Field

from providers.events import Event
from tools.base import ToolKind


class ToolStarted(Event):
    """A tool call passed every check (policy, rules, hooks, approval) and starts running."""

    log_level: ClassVar[int] = logging.DEBUG  # one a tool call; the session keeps it

    type: Literal["tool_started"] = "tool_started"
    tool: str
    tool_use_id: str
    kind: ToolKind
    """What the tool may do (`Tool.kind`). Only a tool that can change something has its
    start kept in the session: after a kill, that start says the change may have begun."""

    def describe(self) -> str:
        return f"{self.tool} running"


class ToolFailed(Event):
    """A tool call ended in an error result."""

    type: Literal["tool_failed"] = "tool_failed"
    tool: str
    tool_use_id: str
    category: str
    message: str

    def describe(self) -> str:
        return f"{self.tool} failed: {self.message}"


class ToolRetried(Event):
    """An idempotent tool is tried again after a transient failure."""

    type: Literal["tool_retried"] = "tool_retried"
    tool: str
    tool_use_id: str
    attempt: int
    delay: float
    message: str

    def describe(self) -> str:
        return f"{self.tool}: retrying in {self.delay:g}s ({self.message})"


RefusedBy = Literal["policy", "approval", "hook"]
"""Who refused a tool call: the safety policy, the approval mode, or another hook."""


class ToolRefused(Event):
    """The safety policy, the approval mode or a hook refused a call."""

    type: Literal["tool_refused"] = "tool_refused"
    tool: str
    tool_use_id: str
    reason: str
    by: RefusedBy

    def describe(self) -> str:
        return f"{self.tool} refused: {self.reason}"


class ToolTimedOut(Event):
    """A tool call took longer than its timeout."""

    type: Literal["tool_timed_out"] = "tool_timed_out"
    tool: str
    tool_use_id: str
    timeout: float

    def describe(self) -> str:
        return f"{self.tool} timed out after {self.timeout:g}s"


class ToolRepeatedFailure(Event):
    """The same call (same tool, same arguments) failed again in this turn."""

    type: Literal["tool_repeated_failure"] = "tool_repeated_failure"
    tool: str
    count: int
    limit_reached: bool

    def describe(self) -> str:
        return f"{self.tool} failed the same way {self.count} times"


class ToolRepeatedCall(Event):
    """The same call (same tool, same arguments) returned the same result again this turn."""

    type: Literal["tool_repeated_call"] = "tool_repeated_call"
    tool: str
    count: int
    limit_reached: bool

    def describe(self) -> str:
        return f"{self.tool} returned the same result {self.count} times; the model was told"


class CheckpointRecorded(Event):
    """A file's prior state was saved before a change."""

    type: Literal["checkpoint_recorded"] = "checkpoint_recorded"
    path: str
    existed_before: bool
    turn: int
    tool_use_id: str

    def describe(self) -> str:
        return f"checkpoint of {self.path}"


class CommandChangedFiles(Event):
    """A command changed files in the workspace; their prior states are saved for ``/undo``.

    File tools announce each change before it with `CheckpointRecorded`; a command's
    changes are only known after it, from the workspace scans around it.
    """

    type: Literal["command_changed_files"] = "command_changed_files"
    tool_use_id: str
    paths: list[str]
    """Workspace-relative paths the command created, changed or deleted."""

    def describe(self) -> str:
        return f"the command changed {len(self.paths)} file(s)"


class RolledBack(Event):
    """A failed call's partial changes were undone."""

    type: Literal["rolled_back"] = "rolled_back"
    tool: str
    tool_use_id: str
    restored: list[str]
    failed: list[str]

    def describe(self) -> str:
        extra = f", {len(self.failed)} failed" if self.failed else ""
        return f"{self.tool}: rolled back {len(self.restored)} file(s){extra}"


class UndoApplied(Event):
    """``/undo`` restored the files of one turn."""

    type: Literal["undo_applied"] = "undo_applied"
    turn: int
    restored: list[str]
    failed: list[str]
    kept: list[str] = Field(default_factory=list)
    """Paths left alone because they changed after the agent's edit."""

    def describe(self) -> str:
        extra = f", {len(self.failed)} could not be restored" if self.failed else ""
        if self.kept:
            extra += f", {len(self.kept)} changed since and kept"
        return f"undo: restored {len(self.restored)} file(s){extra}"


class ProtectedPathsRestored(Event):
    """A command changed protected files (git config and hooks, agent config); they were put
    back."""

    type: Literal["protected_paths_restored"] = "protected_paths_restored"
    paths: list[str]

    def describe(self) -> str:
        return f"put back protected files a command changed: {', '.join(self.paths)}"


class ProtectedScanIncomplete(Event):
    """The search for protected paths stopped at its entry budget: what lies beyond was not
    looked at (told once per session)."""

    type: Literal["protected_scan_incomplete"] = "protected_scan_incomplete"
    budget: int

    def describe(self) -> str:
        return (
            f"Protection of git config, hooks and agent settings covers the first "
            f"{self.budget:,} entries of this large workspace only: start agent in a smaller "
            "folder to cover all of it."
        )


class McpServerChanged(Event):
    """An MCP server went down (its tools answer that it is unavailable) or came back up."""

    type: Literal["mcp_server_changed"] = "mcp_server_changed"
    server: str
    up: bool
    state: str
    """The server's state: ``ready``, ``restarting``, ``paused`` or ``failed``."""
    reason: str = ""
    tools: int = 0

    def describe(self) -> str:
        if self.up:
            return f"MCP server {self.server} is up again ({self.tools} tools)"
        reason = f": {self.reason}" if self.reason else ""
        return f"MCP server {self.server} is down ({self.state}){reason}"
