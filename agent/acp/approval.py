"""The approval prompt, asked in the editor: ``session/request_permission``.

An `EditorApprover` is the session's `tools.Approver`. It offers allow once, allow always,
reject once and reject always. "Always allow" on a command saves a permission rule for its
prefix in this project (``run_command(git push *)``), as the REPL's ``[p]`` does; the other
"always" answers hold for that tool for the rest of the session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from agent.acp.face import EditorFace
from agent.acp.updates import text_content, tool_kind, tool_locations
from agent.permissions import command_prefix
from tools import ApprovalRequest

log = structlog.get_logger("agent.acp.approval")

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
Ask = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[RequestPermissionResponse]]


class EditorApprover:
    """Asks the editor's user about a tool call (`tools.Approver`).

    Args:
        ask: Sends ``session/request_permission`` for this session and waits for the answer.
        face: The session's face: which call is running, and its diff.
    """

    def __init__(
        self, ask: Ask, face: EditorFace, remember: Callable[[str], None] | None = None
    ) -> None:
        self.ask = ask
        """Sends ``session/request_permission`` (the plan question uses it too)."""
        self._face = face
        self.remember = remember
        """Saves a permission rule for this project (set once the agent is built)."""
        self.always: dict[str, bool] = {}
        """The "always" answers so far, by tool name (a network tool's: by its domain)."""
        self._asked = 0

    async def approve(self, request: ApprovalRequest) -> bool:
        # A network tool's "always" holds for its domain: web_fetch(domain:example.com).
        key = f"{request.tool}(domain:{request.domain})" if request.domain else request.tool
        if key in self.always:
            return self.always[key]
        call = self._face.running_call(request.tool)
        self._asked += 1
        update = ToolCallUpdate(
            tool_call_id=call.id if call is not None else f"approval-{self._asked}",
            title=request.summary,
            kind=tool_kind(request.tool),
            status="pending",
            content=(self._face.diff_of(call) if call is not None else [])
            or [text_content(request.details)],
            locations=tool_locations(call, self._face.workspace) or None if call else None,
            raw_input=call.input if call is not None else None,
        )
        await self._face.outbox.drain()  # the editor has heard of the call before the question
        try:
            response = await self.ask(update, OPTIONS)
        except Exception as error:  # no answer is a "no": the model is told it was refused
            log.warning("permission_not_asked", error=repr(error))
            return False
        choice = _choice(response.outcome)
        if choice is None:  # cancelled: the turn is being cancelled too
            return False
        allowed = choice.startswith("allow")
        prefix = command_prefix(request.details) if request.tool == "run_command" else None
        if choice == "allow_always" and prefix is not None and self.remember is not None:
            try:
                self.remember(f"run_command({prefix} *)")
            except OSError as error:  # it still holds for this session
                log.warning("permission_rule_not_saved", error=str(error))
                self.always[key] = True
        elif choice.endswith("always"):
            self.always[key] = allowed
        return allowed  # the call's update to in_progress comes when it starts (ToolStarted)


def _choice(outcome: Any) -> str | None:
    if isinstance(outcome, AllowedOutcome):
        option: str = outcome.option_id
        return option if option in {o.option_id for o in OPTIONS} else "reject_once"
    return None
