"""Chaos mode's tool faults (``--chaos tools``): calls that fail, hang or print 1 MB.

`ToolChaos` is the executor's runner when the profile injects tool faults (`agent.app` installs
it), so each fault meets the real machinery: a failure goes through the executor's retries
and comes back as an error result the model reads, a hang is stopped by the tool's own
timeout (``tools.file_tool_timeout``, ``tools.command_timeout``), and a flood is cut by the
output limit (``tools.max_output_chars``). A failing or hanging call never runs its tool; a
flooding one runs it, after every check it passed, and adds 1 MB to what it printed. No
fault touches a file.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from providers.chaos import FLOOD_CHARS, ChaosPlan, FaultKind
from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput

_FLOOD_LINE = "chaos: this tool printed far too much output\n"


class ToolChaos:
    """Runs tool calls, each meeting the fault its `ChaosPlan` draws (or none).

    Args:
        plan: The run's plan; tool calls draw from its second, tool-only generator.
    """

    def __init__(self, plan: ChaosPlan) -> None:
        self._plan = plan

    async def __call__(self, tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> ToolOutput:
        fault = self._plan.draw_tool(tool.name)
        if fault is FaultKind.TOOL_FAIL:
            raise ToolError(
                "chaos: the tool failed before doing anything",
                category=ErrorCategory.TRANSIENT,
                hint="try the same call again",
            )
        if fault is FaultKind.TOOL_HANG:
            await asyncio.Event().wait()  # never set: only the executor's timeout ends it
        output = await tool.run(args, ctx)
        if fault is FaultKind.TOOL_FLOOD:
            flood = _FLOOD_LINE * (FLOOD_CHARS // len(_FLOOD_LINE))
            return replace(output, content=f"{output.content}\n{flood}")
        return output
