"""``--input-format stream-json``: user messages as JSON lines on stdin, in Claude Code's shape.

Each line is ``{"type": "user", "message": {"role": "user", "content": ...}}``, where the
content is a string or a list of blocks of which the text blocks are read.
"""

from __future__ import annotations

import json
from typing import Any


class BadInputLine(ValueError):
    """A line that holds no user message; the message says what was wrong."""


MAX_LINE_CHARS = 10_000_000


def prompt_from_line(line: str) -> str:
    """The prompt text of one input line.

    Raises:
        BadInputLine: the line is not JSON, not a user message, or has no text.
    """
    if len(line) > MAX_LINE_CHARS:
        raise BadInputLine(f"line longer than {MAX_LINE_CHARS} characters")
    try:
        data: Any = json.loads(line)
    except json.JSONDecodeError as error:
        raise BadInputLine(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(data, dict) or data.get("type") != "user":
        raise BadInputLine('expected {"type": "user", "message": {...}}')
    message = data.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise BadInputLine('"message" must be an object with "role": "user"')
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "text":
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise BadInputLine(f"content block {kind!r} is not supported; send text blocks")
            if not isinstance(block.get("text"), str):
                raise BadInputLine('a text block needs a string "text"')
            parts.append(block["text"])
        text = "\n\n".join(parts)
    else:
        raise BadInputLine('"content" must be a string or a list of text blocks')
    if not text.strip():
        raise BadInputLine("the message has no text")
    return text
