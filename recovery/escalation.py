"""Token escalation helpers: the raised limit, and which truncated answer is more complete."""

from __future__ import annotations

import json

from providers import ChatResponse, DeltaHandler, StreamReset, TextDelta, ToolUseBlock, ToolUseDelta


def escalated_limit(sent: int, ceiling: int) -> int | None:
    """Twice ``sent``, capped by the model's ``ceiling``; None if that is no increase."""
    bigger = min(2 * sent, ceiling)
    return bigger if bigger > sent else None


def completeness(response: ChatResponse) -> tuple[int, int]:
    """A sort key: output tokens as reported, then characters of text and tool input."""
    chars = len(response.message.text) + sum(
        len(json.dumps(call.input)) for call in response.message.tool_uses
    )
    return response.usage.output_tokens, chars


def replay(response: ChatResponse, on_delta: DeltaHandler | None, reason: str) -> None:
    """Make the stream show ``response`` again after a later attempt streamed something else."""
    if on_delta is None:
        return
    on_delta(StreamReset(reason=reason))
    if response.message.text:
        on_delta(TextDelta(text=response.message.text))
    for index, block in enumerate(response.message.content):
        if isinstance(block, ToolUseBlock):
            on_delta(ToolUseDelta(index=index, id=block.id, name=block.name))
            on_delta(ToolUseDelta(index=index, partial_json=json.dumps(block.input)))
