"""The session's mode by Claude Code's names: an approval mode, or plan mode over it.

Claude Code has one permission mode; here it is two pieces of `PermissionCheck` state,
``approval`` and ``plan_mode`` (leaving plan mode goes back to the approval under it). These
read and set both by Claude Code's names, for hooks (``permission_mode``), the REPL's
Shift-Tab and an editor's ``session/set_mode``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.hooks import ApprovalMode

if TYPE_CHECKING:  # check.py imports the hooks, which name modes by these names
    from agent.permissions.check import PermissionCheck

CLAUDE_NAMES: dict[str, str] = {
    ApprovalMode.ASK: "default",
    ApprovalMode.AUTO_EDIT: "acceptEdits",
    ApprovalMode.FULL_AUTO: "bypassPermissions",
}
"""Our approval modes under Claude Code's names."""
APPROVALS = {name: ApprovalMode(mode) for mode, name in CLAUDE_NAMES.items()}
MODE_IDS = ("default", "acceptEdits", "plan", "bypassPermissions")
"""Every mode, in Claude Code's Shift-Tab order."""


def mode_settings(mode_id: str) -> dict[str, str | bool]:
    """``mode_id`` (one of `MODE_IDS`) as configuration: ``approval``, or ``plan_mode``."""
    return {"plan_mode": True} if mode_id == "plan" else {"approval": APPROVALS[mode_id].value}


def claude_mode(approval: ApprovalMode, plan_mode: bool) -> str:
    """The mode by Claude Code's name: ``plan`` while plan mode is on, else the approval's."""
    return "plan" if plan_mode else CLAUDE_NAMES[approval]


def current_mode(permissions: PermissionCheck) -> str:
    return claude_mode(permissions.approval, permissions.plan_mode)


def set_mode(permissions: PermissionCheck, mode_id: str) -> None:
    """Switch to ``mode_id``; ``plan`` keeps the approval mode to go back to.

    Raises:
        ValueError: ``mode_id`` is none of `MODE_IDS` (the message lists them).
    """
    if mode_id == "plan":
        permissions.plan_mode = True
        return
    if mode_id not in APPROVALS:
        raise ValueError(f"{mode_id!r} is not one of {', '.join(MODE_IDS)}")
    permissions.approval = APPROVALS[mode_id]
    permissions.plan_mode = False


def next_mode(permissions: PermissionCheck, *, bypass: bool) -> str:
    """Shift-Tab: default, acceptEdits, plan, then bypassPermissions only when the session
    may use it (it started there, as Claude Code offers it only when started with it)."""
    order = [mode for mode in MODE_IDS if bypass or mode != "bypassPermissions"]
    current = current_mode(permissions)
    following = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
    set_mode(permissions, following)
    return following
