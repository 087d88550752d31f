"""The kinds of sub-agent the `task` tool can start: which tools each gets and what it is told.

``general-purpose`` gets every tool its parent has except `task`; ``explore`` only reads:
read_file, search, list_files, and run_command for the commands plan mode allows
(`agent.permissions.read_only`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent.permissions.read_only import not_read_only
from tools.base import Tool
from tools.hooks import BeforeToolHook, Permit, Refusal, ToolInvocation


@dataclass(frozen=True)
class SubagentType:
    """One kind of child.

    Args:
        name: What ``subagent_type`` names.
        description: When to use it, as the parent model reads it.
        prompt: Added to the child's system prompt.
        tools: The tool names it is offered (None: every tool of the parent but `task`).
        read_only: Its commands must be read-only (refused otherwise).
        max_turns: Model calls it may make (None: ``subagents.max_turns``).
        model: The model its file names (None or ``inherit``: the parent's).
        permission_mode: Its file's ``permissionMode`` (Claude Code's names), None if none.
        scope: Where it comes from: built in, the project's files or the person's.
        source: Its file (None: built in).
        digest: Its file's content hash (a project file's mode holds once allowed as it is).
    """

    name: str
    description: str
    prompt: str
    tools: frozenset[str] | None = None
    read_only: bool = False
    max_turns: int | None = None
    model: str | None = None
    permission_mode: str | None = None
    scope: Literal["built-in", "project", "user"] = "built-in"
    source: Path | None = None
    digest: str = ""
    hooks: tuple[BeforeToolHook, ...] = field(default=(), compare=False)

    @property
    def loosens(self) -> bool:
        """Whether its ``permissionMode`` would ask the person less than usual."""
        return self.permission_mode in LOOSER_MODES

    def allows(self, name: str) -> bool:
        """Whether a child of this kind is offered the tool ``name``."""
        return self.tools is None or name in self.tools

    def offered(self, tools: Sequence[Tool[Any]]) -> list[Tool[Any]]:
        """Which of ``tools`` a child of this kind gets."""
        return [tool for tool in tools if self.allows(tool.name)]

    def checks(self) -> list[BeforeToolHook]:
        """The extra checks its calls go through (after the parent's)."""
        return [*self.hooks, only_reading] if self.read_only else list(self.hooks)


LOOSER_MODES = {"acceptEdits": "auto-edit", "bypassPermissions": "full-auto"}
"""The ``permissionMode`` values that ask less, and the approval mode each stands for."""


async def only_reading(invocation: ToolInvocation) -> Refusal | Permit | None:
    """Refuses an edit, and a command that may change something (an ``explore`` child, or
    one whose definition says ``permissionMode: plan``, only reads)."""
    if invocation.tool.kind == "edit":
        return Refusal(
            "this sub-agent only reads; it cannot change files",
            "answer with the change you would make instead",
            by="policy",
        )
    command = invocation.tool.command(invocation.args)
    if invocation.tool.kind in ("read", "network"):
        return None
    if command is None:
        return Refusal(
            f"this sub-agent only reads, and {invocation.tool.name} may change things",
            "use read_file, search or list_files, or a read-only command",
            by="policy",
        )
    why = not_read_only(command)
    if why is None:
        return None
    return Refusal(
        f"this sub-agent only reads, and this command may change something ({why})",
        "use read_file, search or list_files, or a read-only command",
        by="policy",
    )


SUBAGENT_NOTE = (
    "You are a sub-agent: another agent gave you one self-contained job. Do it with the "
    "tools you have, then answer with what you found or did, complete and concise: your "
    "answer is all the other agent sees of your work. You cannot start sub-agents."
)

BUILTIN_TYPES: dict[str, SubagentType] = {
    kind.name: kind
    for kind in (
        SubagentType(
            name="general-purpose",
            description="Researches, searches, edits and runs commands for a multi-step job.",
            prompt=SUBAGENT_NOTE,
        ),
        SubagentType(
            name="explore",
            description="Reads and searches the code to answer a question; changes nothing.",
            prompt=f"{SUBAGENT_NOTE} You only read: never try to change a file.",
            tools=frozenset({"read_file", "search", "list_files", "run_command"}),
            read_only=True,
        ),
    )
}
"""The kinds every agent has, by name."""
