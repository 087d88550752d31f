"""``session/load``: a saved conversation told again as ``session/update`` notifications."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from acp.schema import TextContentBlock, ToolCallProgress, UserMessageChunk

from agent.acp.face import Update
from agent.acp.updates import edit_diff, message_chunk, result_content, tool_call_start, tool_kind
from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock


def history_updates(messages: Sequence[Message], workspace: Path) -> Iterator[Update]:
    """Each message's text, tool calls and results, in order, as the editor shows them live.

    A replayed ``write_file`` shows no diff: the file on disk is no longer its old side.
    """
    calls: dict[str, ToolUseBlock] = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                if message.role == "user":
                    content = TextContentBlock(type="text", text=block.text)
                    yield UserMessageChunk(session_update="user_message_chunk", content=content)
                else:
                    yield message_chunk(block.text)
            elif isinstance(block, ToolUseBlock):
                calls[block.id] = block
                diff = edit_diff(block, workspace) if block.name == "edit_file" else []
                yield tool_call_start(block, workspace, diff, status="in_progress")
            elif isinstance(block, ToolResultBlock):
                call = calls.get(block.tool_use_id)
                yield ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=block.tool_use_id,
                    kind=tool_kind(call.name) if call is not None else None,
                    status="failed" if block.is_error else "completed",
                    content=result_content(block),
                )
