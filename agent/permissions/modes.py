"""The session's permission mode, in one place: an approval mode, and plan mode over it.

Claude Code has one permission mode; here it is two pieces of state, ``approval`` (which
calls the approval gate asks about) and ``plan_mode`` (only reading tools run), kept by one
`Modes` object per session. Leaving plan mode goes back to the approval under it. Everything
that changes the mode — the REPL's Shift-Tab and ``/plan``, an editor's ``session/set_mode``,
an approved plan, ``-p``'s ``/plan`` — calls `Modes.switch` (or `Modes.cycle`, which calls
it), and every change is a `ModeChanged` event on the bus, so each face can show it. The
modes are named by Claude Code's names, as hooks (``permission_mode``), stream-json and ACP
see them.
"""

from __future__ import annotations

from typing import Literal

from providers.events import Event, EventSink
from tools.hooks import ApprovalMode

CLAUDE_NAMES: dict[str, str] = {
    ApprovalMode.ASK: "default",
    ApprovalMode.AUTO_EDIT: "acceptEdits",
    ApprovalMode.FULL_AUTO: "bypassPermissions",
}
"""Our approval modes under Claude Code's names."""
APPROVALS = {name: ApprovalMode(mode) for mode, name in CLAUDE_NAMES.items()}
MODE_IDS = ("default", "acceptEdits", "plan", "bypassPermissions")
"""Every mode, in Claude Code's Shift-Tab order."""
_MEANINGS = {
    "default": "asks before edits and commands",
    "acceptEdits": "edits files without asking",
    "plan": "read-only until a plan is approved",
    "bypassPermissions": "runs every tool call without asking",
}


class ModeChanged(Event):
    """The session's permission mode changed (the REPL's mode line, an editor's mode menu,
    stream-json's status message and hooks' ``permission_mode`` follow it)."""

    type: Literal["mode_changed"] = "mode_changed"
    mode: str
    """The mode now, by Claude Code's name (one of `MODE_IDS`)."""
    previous: str
    """The mode before the change."""

    def describe(self) -> str:
        return f"Mode: {self.mode} ({_MEANINGS.get(self.mode, self.mode)})"


def mode_settings(mode_id: str) -> dict[str, str | bool]:
    """``mode_id`` (one of `MODE_IDS`) as configuration: ``approval``, or ``plan_mode``."""
    return {"plan_mode": True} if mode_id == "plan" else {"approval": APPROVALS[mode_id].value}


def claude_mode(approval: ApprovalMode, plan_mode: bool) -> str:
    """The mode by Claude Code's name: ``plan`` while plan mode is on, else the approval's."""
    return "plan" if plan_mode else CLAUDE_NAMES[approval]


class Modes:
    """The session's permission mode; `switch` is the one way to change it.

    Args:
        approval: The approval mode to start with.
        plan_mode: Whether the session starts in plan mode.
        may_bypass: Whether Shift-Tab reaches ``bypassPermissions`` (Claude Code offers it
            only to a session started there); by default, whether ``approval`` is it.
        emit: Where each `ModeChanged` goes (the session's event bus).
    """

    def __init__(
        self,
        approval: ApprovalMode = ApprovalMode.ASK,
        plan_mode: bool = False,
        *,
        may_bypass: bool | None = None,
        emit: EventSink | None = None,
    ) -> None:
        self._approval = ApprovalMode(approval)
        self._plan_mode = plan_mode
        if may_bypass is None:
            may_bypass = self._approval is ApprovalMode.FULL_AUTO
        self._may_bypass = may_bypass
        self._emit = emit

    def carried_on(self, emit: EventSink | None) -> Modes:
        """The same modes for a new agent of the same person (``/clear``, ``/resume``)."""
        return Modes(self._approval, self._plan_mode, may_bypass=self._may_bypass, emit=emit)

    @property
    def may_bypass(self) -> bool:
        """Whether Shift-Tab reaches ``bypassPermissions``."""
        return self._may_bypass

    @property
    def approval(self) -> ApprovalMode:
        """Which calls the approval gate asks about (the tools read it per call)."""
        return self._approval

    @property
    def plan_mode(self) -> bool:
        """While on, only reading tools and read-only commands run (`agent.permissions.plan`)."""
        return self._plan_mode

    @property
    def mode(self) -> str:
        """The mode by Claude Code's name."""
        return claude_mode(self._approval, self._plan_mode)

    @property
    def under_plan(self) -> str:
        """The mode leaving plan mode goes back to (the approval mode's name)."""
        return CLAUDE_NAMES[self._approval]

    def switch(self, mode_id: str) -> None:
        """Switch to ``mode_id``; ``plan`` keeps the approval mode to go back to.

        Raises:
            ValueError: ``mode_id`` is none of `MODE_IDS` (the message lists them).
        """
        before = self.mode
        if mode_id == "plan":
            self._plan_mode = True
        elif mode_id in APPROVALS:
            self._approval, self._plan_mode = APPROVALS[mode_id], False
        else:
            raise ValueError(f"{mode_id!r} is not one of {', '.join(MODE_IDS)}")
        if self.mode != before and self._emit is not None:
            self._emit(ModeChanged(mode=self.mode, previous=before))

    def plan(self, on: bool) -> None:
        """Plan mode on, or off (back to the approval mode under it)."""
        self.switch("plan" if on else self.under_plan)

    def cycle(self) -> str:
        """Shift-Tab: default, acceptEdits, plan, then bypassPermissions when `may_bypass`;
        returns the mode switched to."""
        order = [mode for mode in MODE_IDS if self._may_bypass or mode != "bypassPermissions"]
        now = self.mode
        following = order[(order.index(now) + 1) % len(order)] if now in order else order[0]
        self.switch(following)
        return following
