"""The `task` tool (Claude Code's ``Task``/``Agent``): start a child agent on one job.

Several `task` calls of one answer run at the same time (the loop runs neighbouring calls
that may run together at once; `TaskTool.runs_together`), at most ``max_concurrent``; the
rest wait for a place. A child that fails for good is this call's error result, saying why
and what the child did; it never fails the parent's turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from agent.subagents.child import ChildParts, report, run_child
from agent.subagents.kinds import BUILTIN_TYPES, SubagentType
from providers import ToolUseBlock
from tools.base import Tool, ToolContext, ToolError, ToolOutput
from tools.settings import ToolSettings

TASK_NAMES = frozenset({"task", "Task", "Agent"})
"""The names a call of this tool may come under; a child is refused all of them."""
TIMEOUT = 24 * 3600.0
"""A child's own limits (turns, the turn timeout, recovery's) end it long before this."""


class TaskInput(BaseModel):
    """The arguments of a `task` call."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(
        min_length=1, max_length=200, description="A short (3-5 word) description of the job"
    )
    prompt: str = Field(min_length=1, description="The whole job, for the sub-agent to do")
    subagent_type: str = Field(
        default="general-purpose", description="Which kind of sub-agent does it"
    )


class TaskTool(Tool[TaskInput]):
    """Starts a sub-agent (see the module's docstring)."""

    name = "task"
    input_model = TaskInput
    kind = "read"  # starting one asks nothing: each of the child's calls is checked

    def __init__(
        self,
        parts: ChildParts,
        max_concurrent: int,
        kinds: Mapping[str, SubagentType] = BUILTIN_TYPES,
    ) -> None:
        self.parts = parts
        self.kinds = dict(kinds)
        self.places = asyncio.Semaphore(max_concurrent)
        self.asking = asyncio.Lock()

    @property
    def description(self) -> str:  # type: ignore[override]
        listed = "\n".join(f"- {kind.name}: {kind.description}" for kind in self.kinds.values())
        return (
            "Hand a self-contained job to a sub-agent with its own conversation; you get back "
            "its final answer only. Give it everything it needs in `prompt`: it sees nothing "
            "of this conversation. Several task calls in one answer run at the same time. "
            f"Sub-agent types (`subagent_type`):\n{listed}"
        )

    @staticmethod
    def runs_together(call: ToolUseBlock) -> bool:
        """Whether ``call`` may run at the same time as its neighbours."""
        return call.name in TASK_NAMES

    def timeout(self, args: TaskInput, settings: ToolSettings) -> float:
        return TIMEOUT

    def summary(self, args: TaskInput) -> str:
        return f"task ({args.subagent_type}): {args.description}"

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolOutput:
        wanted = args.subagent_type.strip()
        folded = {name.lower(): kind for name, kind in self.kinds.items()}
        kind = self.kinds.get(wanted) or folded.get(wanted.lower())  # Claude Code's "Explore"
        if kind is None:
            raise ToolError(
                f"there is no sub-agent type {args.subagent_type!r}",
                hint=f"use one of: {', '.join(self.kinds)}",
            )
        async with self.places:
            outcome = await run_child(
                self.parts,
                kind,
                args.prompt,
                ctx.tool_use_id,
                TASK_NAMES,
                args.description,
                self.asking,
                ctx.turn,
            )
        return report(outcome)
