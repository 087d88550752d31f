"""Plan mode: what the model may do while it only plans (read, list, search, look).

Edits are refused, MCP tools too (what they change is unknown), and a command runs only when
every program it runs only reads, as `agent.permissions.read_only` decides from the command's
analysis (no option that writes, no redirection, no program named by a path), and then in a
read-only sandbox (`PlanAwareSandbox`), so whatever the list misses fails too. The person
approves the plan before anything is changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from agent.permissions.read_only import not_read_only
from tools.guard.sandbox import Sandbox, SandboxMode

INSTRUCTION = (
    "[Plan mode is on: the person wants a plan, not changes. Investigate with read-only tools "
    "(read_file, list_files, search, read-only commands), then answer with a concise, "
    "numbered plan of the changes you would make. Do not edit files or run commands that "
    "change anything; the person approves the plan first.]"
)
GO_AHEAD = "The plan is approved. Carry it out now."


def planned(prompt: str, plan_mode: bool) -> str:
    """``prompt``, asking for a plan first while plan mode is on."""
    return f"{INSTRUCTION}\n\n{prompt}" if plan_mode and prompt.strip() else prompt


def plan_refusal(tool: str, kind: str, command: str | None) -> str | None:
    """Why plan mode refuses this call, or None when it may run."""
    if kind == "edit":
        return f"plan mode: {tool} changes files, and the plan is not approved yet"
    if command is None:
        return None if kind == "read" else f"plan mode: {tool} may change things"
    why = not_read_only(command)
    if why is not None:
        return f"plan mode: only read-only commands run before the plan is approved ({why})"
    return None


@dataclass(frozen=True)
class PlanAwareSandbox(Sandbox):
    """The command sandbox, read-only while ``read_only()`` (plan mode) says so.

    Only ``run_command``'s launch (`argv`) changes; MCP servers keep the mode they started
    with. Where the sandbox is not enforced (off, no Landlock) the program list above is the
    only guard.
    """

    read_only: Callable[[], bool] = field(default=lambda: False, compare=False)

    @classmethod
    def around(cls, sandbox: Sandbox, read_only: Callable[[], bool]) -> PlanAwareSandbox:
        """``sandbox`` with plan mode's read-only switch."""
        values = {item.name: getattr(sandbox, item.name) for item in fields(Sandbox)}
        return cls(**values, read_only=read_only)

    def argv(self, command: str, workspace: Path) -> list[str]:
        if self.read_only() and self.mode is SandboxMode.WORKSPACE_WRITE:
            return replace(self, mode=SandboxMode.READ_ONLY, read_only=lambda: False).argv(
                command, workspace
            )
        return super().argv(command, workspace)
