"""The naive agent of the benchmark: the Anthropic SDK with its default retries, no fallback,
none of our recovery; the same chaos transport under it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic

from providers.adapters.chaos_transport import chaos_client
from providers.chaos import ChaosPlan


async def _task(client: anthropic.AsyncAnthropic, model: str, prompt: str, workspace: Path) -> bool:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    tools = [
        {
            "name": "write_file",
            "description": "Write a file.",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        }
    ]
    for _ in range(4):
        reply = await client.messages.create(
            model=model,
            max_tokens=1024,
            messages=messages,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
        )
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:
            return True
        messages.append({"role": "assistant", "content": [c.model_dump() for c in reply.content]})
        results = []
        for call in calls:
            arguments = dict(call.input)
            (workspace / str(arguments["path"])).write_text(str(arguments["content"]))
            results.append({"type": "tool_result", "tool_use_id": call.id, "content": "ok"})
        messages.append({"role": "user", "content": results})
    return False


def run_naive(
    plan: ChaosPlan | None, base_url: str, model: str, prompt: str, workspace: Path
) -> bool:
    """One task; True if it finished (an SDK error that survives its retries is a failure)."""

    async def go() -> bool:
        http = chaos_client(plan, model=f"anthropic:{model}", primary=True) if plan else None
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-naive", base_url=base_url, http_client=http
        )
        try:
            return await _task(client, model, prompt, workspace)
        except anthropic.APIError:
            return False
        finally:
            await client.close()

    return asyncio.run(go())
