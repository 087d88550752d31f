"""What the editor is shown: the engine's calls, results and notices as ACP values.

Pure functions of our types (no connection, no session), so each mapping can be read and
tested alone: a tool call's kind, title, locations and diff; a result's content; a notice.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
)

from providers import ToolResultBlock, ToolUseBlock
from tools.todos import TodoItem

Content = ContentToolCallContent | FileEditToolCallContent

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "list_files": "search",
    "search": "search",
    "run_command": "execute",
    "todo_write": "think",
    "web_fetch": "fetch",
    "web_search": "fetch",
}
MAX_RESULT_CHARS = 20_000
"""A tool's output shown in the editor: the model's copy is trimmed already, this is a cap."""
MAX_DIFF_BYTES = 256 * 1024
"""A file larger than this is not read to show the old side of a rewrite."""


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a tool (its icon in the editor); MCP tools by what their name says."""
    if name in _KINDS:
        return _KINDS[name]
    lowered = name.lower()
    if any(word in lowered for word in ("fetch", "http", "browse", "web")):
        return "fetch"
    return "other"


def tool_title(call: ToolUseBlock) -> str:
    """One line naming the call, as the terminal shows it: ``run: pytest -q``."""
    args = call.input
    if call.name == "run_command" and isinstance(args.get("command"), str):
        return f"run: {args['command']}"
    if call.name == "search" and isinstance(args.get("pattern"), str):
        return f"search: {args['pattern']}"
    if isinstance(args.get("path"), str):
        return f"{call.name} {args['path']}"
    return call.name


def _absolute(workspace: Path, path: str) -> str:
    return str(workspace / path) if not os.path.isabs(path) else path


def tool_locations(call: ToolUseBlock, workspace: Path) -> list[ToolCallLocation]:
    """The file a call reads or changes, as an absolute path (the editor can follow it)."""
    path = call.input.get("path")
    if not isinstance(path, str) or not path:
        return []
    offset = call.input.get("offset")
    line = offset if call.name == "read_file" and isinstance(offset, int) else None
    return [ToolCallLocation(path=_absolute(workspace, path), line=line)]


def _current_text(path: Path) -> str | None:
    """A regular file's text now, if it is small and readable; None if it does not exist."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_DIFF_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def edit_diff(call: ToolUseBlock, workspace: Path) -> list[Content]:
    """The change an edit proposes, as the editor's diff view shows it (empty for others).

    ``edit_file`` shows the replaced snippet; ``write_file`` the file's whole text before and
    after (only regular files up to 256 KiB are read: a FIFO must not block the face).
    """
    args, path = call.input, call.input.get("path")
    if not isinstance(path, str) or not path:
        return []
    absolute = _absolute(workspace, path)
    if call.name == "edit_file":
        old, new = args.get("old_string"), args.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return [FileEditToolCallContent(type="diff", path=absolute, old_text=old, new_text=new)]
    if call.name == "write_file" and isinstance(args.get("content"), str):
        old_text = _current_text(Path(absolute))
        return [
            FileEditToolCallContent(
                type="diff", path=absolute, old_text=old_text, new_text=args["content"]
            )
        ]
    return []


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def result_content(result: ToolResultBlock) -> list[Content]:
    """What a call returned, cut to `MAX_RESULT_CHARS`."""
    text = result.content
    if len(text) > MAX_RESULT_CHARS:
        more = len(text) - MAX_RESULT_CHARS
        text = f"{text[:MAX_RESULT_CHARS]}\n… ({more} more characters)"
    return [text_content(text)] if text else []


def tool_call_start(
    call: ToolUseBlock,
    workspace: Path,
    diff: list[Content],
    *,
    status: ToolCallStatus = "pending",
) -> ToolCallStart:
    """The ``tool_call`` update for a call the model made; ``diff`` from `edit_diff`."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=tool_title(call),
        kind=tool_kind(call.name),
        status=status,
        content=list(diff) or None,
        locations=tool_locations(call, workspace) or None,
        raw_input=call.input,
    )


def message_chunk(text: str, meta: dict[str, Any] | None = None) -> AgentMessageChunk:
    """An ``agent_message_chunk`` carrying ``text`` (and ``_meta``, when given)."""
    return AgentMessageChunk(
        session_update="agent_message_chunk",
        content=TextContentBlock(type="text", text=text),
        field_meta=meta,
    )


def notice_chunk(text: str, fields: dict[str, Any] | None = None) -> AgentMessageChunk:
    """A notice the terminal would show on its own line (a retry, a fallback, a compaction).

    The text stands apart from the answer around it; ``_meta.agent`` carries the same fields
    as the stream-json ``system`` line, for an editor that wants to show them otherwise.
    """
    meta = {"agent": {"notice": True, **(fields or {})}}
    return message_chunk(f"\n\n> {text}\n\n", meta)


def plan_update(todos: Sequence[TodoItem]) -> AgentPlanUpdate:
    """The model's todo list as the spec's ``plan`` update: every entry, the whole list each
    time (the editor replaces its plan with it). The list has no priorities: all are medium."""
    entries = [PlanEntry(content=t.content, priority="medium", status=t.status) for t in todos]
    return AgentPlanUpdate(session_update="plan", entries=entries)
