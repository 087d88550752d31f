"""``before_tool`` hooks: the safety policy, the approval gate, and the types hooks share."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from providers.messages import ToolUseBlock
from tools.base import Tool, ToolContext, ToolKind
from tools.blocking import in_worker
from tools.events import RefusedBy
from tools.guard.policy import check_command
from tools.guard.protected import protected_reason
from tools.shell_reading import analyse
from tools.workspace import (
    PathOutsideWorkspace,
    relative_name,
    resolve_in_workspace,
    resolved_root,
)


class ApprovalMode(StrEnum):
    """Which tool calls need the person's approval (the safety policy applies in every mode).

    The config file, ``--approval`` and the project trust check all take these values.
    """

    ASK = "ask"
    """Edits and commands need approval."""
    AUTO_EDIT = "auto-edit"
    """Only commands need approval."""
    FULL_AUTO = "full-auto"
    """Nothing needs approval."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person is asked to approve."""

    tool: str
    summary: str
    """One line, e.g. ``run: pytest -q`` or ``edit_file src/app.py``."""
    details: str
    """A diff for file changes, the full command for commands."""
    kind: ToolKind
    domain: str | None = None
    """The host a network tool reaches (``[a]lways for this domain``)."""


class Approver(Protocol):
    """Asks the person; the REPL implements it with a prompt."""

    async def approve(self, request: ApprovalRequest) -> bool:
        """True if the person allows the call."""
        ...


@dataclass(frozen=True)
class ToolInvocation:
    """A validated call about to run, as hooks see it."""

    call: ToolUseBlock
    tool: Tool[Any]
    args: BaseModel
    context: ToolContext


@dataclass(frozen=True)
class Refusal:
    """A hook's "no": the reason and what the model could do instead."""

    reason: str
    hint: str = ""
    by: RefusedBy = "hook"


@dataclass(frozen=True)
class Permit:
    """A hook's "yes, but": skip or force the approval prompt, and/or replace the input.

    ``allow`` skips the approval prompt of the approval mode (never the safety policy, the
    sandbox, or the question about a protected path); ``ask`` asks the person even where
    the mode would not (with nobody to ask, the call is refused). ``updated_input`` replaces
    the call's arguments; they are validated against the tool's schema and checked by the
    safety policy again.
    """

    decision: Literal["allow", "ask"] | None = None
    updated_input: dict[str, Any] | None = None
    reason: str = ""
    """Why; shown to the person with the question when the decision is ``ask``."""


BeforeToolHook = Callable[[ToolInvocation], Awaitable[Refusal | Permit | None]]
"""Returns a `Refusal` to stop the call, a `Permit` to change how it goes on, or None to
let it through."""


def needs_approval(mode: ApprovalMode, kind: ToolKind) -> bool:
    """Whether a tool of ``kind`` must be approved by the person under ``mode``."""
    if kind == "read" or mode == ApprovalMode.FULL_AUTO:
        return False
    return mode == ApprovalMode.ASK or kind in ("command", "network")


def _protected_write(invocation: ToolInvocation, commands: tuple[str, ...]) -> str | None:
    """``path: reason`` when an edit tool would write a protected path, else None (it scans
    the workspace: run it off the event loop). ``commands``: the agent's hook commands."""
    if invocation.tool.kind != "edit":
        return None
    root = resolved_root(invocation.context.workspace)
    for raw in invocation.tool.paths(invocation.args):
        try:
            path = resolve_in_workspace(root, raw)
        except PathOutsideWorkspace:
            continue  # the safety policy refuses it
        reason = protected_reason(root, path, commands)
        if reason is not None:
            return f"{relative_name(root, path)} is protected ({reason})"
    return None


def _what_runs(command: str) -> str:
    """What the command runs and writes, for the question; "" when that is its first word."""
    told = analyse(command).summary()
    words = command.split(None, 1)
    return "" if words and told == f"runs: {words[0]}" else told


class SafetyPolicy:
    """Refuses paths outside the workspace and catastrophic commands, in every mode."""

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    async def __call__(self, invocation: ToolInvocation) -> Refusal | None:
        tool, args, ctx = invocation.tool, invocation.args, invocation.context
        for raw in tool.paths(args):
            try:
                resolve_in_workspace(ctx.workspace, raw)
            except PathOutsideWorkspace as exc:
                return Refusal(str(exc), "use a path relative to the workspace root", by="policy")
        command = tool.command(args)
        if command is not None:
            home = self._home or Path.home()
            # Off the event loop, so Ctrl-C is handled even while a huge command is checked.
            decision = await in_worker(
                check_command, command, home=home, workspace=resolved_root(ctx.workspace)
            )
            if not decision.allowed:
                return Refusal(decision.reason, decision.hint, by="policy")
        return None


class ApprovalGate:
    """Asks the `Approver` when the mode requires it; refuses when nobody can be asked.

    A write to a protected path (git config and hooks, the agent's config, a file a hook
    runs: `tools.guard.protected`) is asked about in every mode, unless ``allow_protected``;
    with nobody to ask it is refused. ``hook_commands`` are the agent's configured hook
    commands. ``mode`` may be a function: the mode is then read at each call (an editor
    switches it mid-session).
    """

    def __init__(
        self,
        mode: ApprovalMode | Callable[[], ApprovalMode],
        approver: Approver | None,
        *,
        allow_protected: bool = False,
        hook_commands: tuple[str, ...] = (),
    ) -> None:
        self._mode_of: Callable[[], ApprovalMode] = (
            mode if callable(mode) else itertools.repeat(ApprovalMode(mode)).__next__
        )
        self._approver = approver
        self._allow_protected = allow_protected
        self._hook_commands = hook_commands

    async def __call__(
        self, invocation: ToolInvocation, *, permit: Permit | None = None
    ) -> Refusal | None:
        """Ask if needed; a hook's ``permit`` skips or forces the mode's question."""
        decision = None if permit is None else permit.decision
        tool, args = invocation.tool, invocation.args
        protected = None
        if not self._allow_protected and tool.kind == "edit":
            protected = await in_worker(_protected_write, invocation, self._hook_commands)
        mode = self._mode_of()
        asked = needs_approval(mode, tool.kind) if decision is None else decision == "ask"
        if protected is None and not asked:
            return None
        if self._approver is None and protected is not None:
            return Refusal(
                f"{protected}; writing it needs the person's approval, and the agent is "
                "running non-interactively",
                "do not retry; tell the person the exact change to make to that file",
                by="policy",
            )
        if self._approver is None and decision == "ask":
            return Refusal(
                f"{tool.name} needs the person's approval (a hook asked for it"
                f"{': ' + permit.reason if permit and permit.reason else ''}), "
                "but the agent is running non-interactively",
                "do not retry this call; finish what you can without it and tell the person "
                "what you could not do",
                by="approval",
            )
        if self._approver is None:
            domain = tool.domain(args)
            rule = f" or --allowedTools '{tool.name}(domain:{domain})'" if domain else ""
            if tool.kind == "network" and not domain:  # a search: one rule allows them all
                rule = f" or --allowedTools {tool.name}"
            return Refusal(
                f"{tool.name} needs the person's approval (approval mode '{mode}'), "
                "but the agent is running non-interactively",
                "do not retry this call; finish what you can without it and tell the person "
                f"to re-run with --yes{rule} (or a less strict --approval) to allow it",
                by="approval",
            )
        try:
            # Diffs read files: off the event loop, and never longer than a file tool may take.
            details = await asyncio.wait_for(
                in_worker(tool.details, args, invocation.context),
                invocation.context.settings.file_tool_timeout,
            )
        except TimeoutError:
            details = "(details unavailable: reading the file took too long)"
        except Exception as exc:  # details are a courtesy; the summary is still shown
            details = f"(details unavailable: {exc})"
        summary = tool.summary(args)
        command = tool.command(args)
        if command is not None and (told := _what_runs(command)):
            summary = f"{summary}  ({told})"
        if protected is not None:
            summary = f"{summary}  [{protected}]"
        if decision == "ask" and permit is not None and permit.reason:
            summary = f"{summary}  [hook: {permit.reason}]"
        request = ApprovalRequest(tool.name, summary, details, tool.kind, tool.domain(args))
        if await self._approver.approve(request):
            return None
        return Refusal(
            "the person declined this call",
            "do not repeat it; ask the person what they want instead, or take another approach",
            by="approval",
        )
