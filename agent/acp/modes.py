"""Session modes in the editor: Claude Code's, as its ACP adapter offers them.

``session/new`` and ``session/load`` answer with the modes and the one in force;
``session/set_mode`` switches it (the approval mode, or plan mode). A turn that ends in plan
mode asks "Ready to code?" on a ``switch_mode`` tool call, with the adapter's three answers;
yes leaves plan mode (``current_mode_update``) and the plan is carried out in the same prompt.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable

import structlog
from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    CurrentModeUpdate,
    PermissionOption,
    RequestPermissionResponse,
    SessionMode,
    SessionModeState,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from agent.acp.face import Outbox
from agent.acp.updates import text_content
from agent.permissions import PermissionCheck

log = structlog.get_logger("agent.acp.modes")

MODES = [
    SessionMode(id="default", name="Default", description="Ask before edits and commands"),
    SessionMode(id="acceptEdits", name="Accept Edits", description="Edit files without asking"),
    SessionMode(
        id="plan", name="Plan Mode", description="Read and plan only, until the plan is approved"
    ),
    SessionMode(
        id="bypassPermissions",
        name="Bypass Permissions",
        description="Run every tool call without asking (the sandbox still holds)",
    ),
]
PLAN_OPTIONS = [
    PermissionOption(
        option_id="acceptEdits", name="Yes, and auto-accept edits", kind="allow_always"
    ),
    PermissionOption(
        option_id="default", name="Yes, and manually approve edits", kind="allow_once"
    ),
    PermissionOption(option_id="plan", name="No, keep planning", kind="reject_once"),
]
READY = "Ready to code?"
Ask = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]
_ids = itertools.count(1)


def mode_state(permissions: PermissionCheck | None) -> SessionModeState | None:
    """The modes offered and the one in force; None without a permission check."""
    if permissions is None:
        return None
    return SessionModeState(current_mode_id=permissions.modes.mode, available_modes=MODES)


def switch_mode(permissions: PermissionCheck | None, mode_id: str) -> None:
    """``session/set_mode``.

    Raises:
        RequestError: ``mode_id`` is none of `MODES`, or the session has no permission check.
    """
    if permissions is None:
        raise RequestError.invalid_params({"modeId": "this session runs without modes"})
    try:
        permissions.modes.switch(mode_id)
    except ValueError as error:
        raise RequestError.invalid_params({"modeId": str(error)}) from None


async def approve_plan(permissions: PermissionCheck, ask: Ask, outbox: Outbox, plan: str) -> bool:
    """Ask whether to carry out ``plan``; on yes, switch to the mode chosen and say so."""
    call_id = f"plan-{next(_ids)}"
    outbox.put(
        ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=READY,
            kind="switch_mode",
            status="pending",
            content=[text_content(plan)] if plan.strip() else None,
        )
    )
    await outbox.drain()  # the editor knows the call before the question about it
    question = ToolCallUpdate(tool_call_id=call_id, title=READY, kind="switch_mode")
    try:
        response = await ask(question, PLAN_OPTIONS)
    except Exception as error:  # no answer: keep planning
        log.warning("plan_not_asked", error=repr(error))
        response = None
    outcome = response.outcome if response is not None else None
    chosen = outcome.option_id if isinstance(outcome, AllowedOutcome) else "plan"
    approved = chosen in ("acceptEdits", "default")
    outbox.put(
        ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="completed" if approved else "failed",
            title="Exited Plan Mode" if approved else "Kept planning",
        )
    )
    if approved:
        permissions.modes.switch(chosen)
        outbox.put(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=chosen))
    return approved
