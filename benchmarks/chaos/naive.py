"""The naive agent of the benchmark: the Anthropic SDK with its default retries, no fallback,
none of our recovery; the same chaos transport under it, and the same tool faults in its
two tools (it stops a hung tool at the same timeout as ours, and turns a tool's exception
into an error result, as any agent does)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic

from providers.adapters.chaos_transport import chaos_client
from providers.chaos import FLOOD_CHARS, ChaosPlan, FaultKind

MAX_STEPS = 10
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "write_file",
        "description": "Write a file.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
]


async def _tool(
    plan: ChaosPlan | None, name: str, arguments: dict[str, Any], workspace: Path, hang: float
) -> tuple[str, bool]:
    """What a tool call returns, and whether it failed."""
    fault = plan.draw_tool(name) if plan is not None else None
    if fault is FaultKind.TOOL_FAIL:
        return "error: the tool failed", True
    if fault is FaultKind.TOOL_HANG:
        await asyncio.sleep(hang)  # what its timeout would wait
        return f"error: timed out after {hang:g}s", True
    try:
        path = workspace / str(arguments["path"])
        if name == "read_file":
            output = path.read_text()
        else:
            path.write_text(str(arguments["content"]))
            output = "ok"
    except (KeyError, OSError) as error:
        return f"error: {error!r}", True
    if fault is FaultKind.TOOL_FLOOD:
        output += "x" * FLOOD_CHARS
    return output, False


async def _task(
    client: anthropic.AsyncAnthropic,
    plan: ChaosPlan | None,
    model: str,
    prompt: str,
    workspace: Path,
    hang: float,
) -> bool:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(MAX_STEPS):
        reply = await client.messages.create(
            model=model,
            max_tokens=1024,
            messages=messages,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
        )
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:
            return True
        messages.append({"role": "assistant", "content": [c.model_dump() for c in reply.content]})
        results = []
        for call in calls:
            output, failed = await _tool(plan, call.name, dict(call.input), workspace, hang)
            results.append(
                {"type": "tool_result", "tool_use_id": call.id, "content": output}
                | ({"is_error": True} if failed else {})
            )
        messages.append({"role": "user", "content": results})
    return False


def run_naive(
    plan: ChaosPlan | None,
    base_url: str,
    model: str,
    prompt: str,
    workspace: Path,
    tool_timeout: float = 1.0,
) -> bool:
    """One task; True if it finished (an SDK error that survives its retries is a failure)."""

    async def go() -> bool:
        http = chaos_client(plan, model=f"anthropic:{model}", primary=True) if plan else None
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-naive", base_url=base_url, http_client=http
        )
        try:
            return await _task(client, plan, model, prompt, workspace, tool_timeout)
        except anthropic.APIError:
            return False
        finally:
            await client.close()

    return asyncio.run(go())
