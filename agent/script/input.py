"""``--input-format stream-json``: user messages as JSON lines on stdin, in Claude Code's shape.

Each line is ``{"type": "user", "message": {"role": "user", "content": ...}}``, where the
content is a string or a list of text blocks and image blocks (``{"type": "image", "source":
{"type": "base64", "media_type": "image/png", "data": ...}}``); each image is checked and scaled
as ``@shot.png`` is.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from providers import ImageBlock
from tools.images import ImageError, image_from_bytes


class BadInputLine(ValueError):
    """A line that holds no user message; the message says what was wrong."""


MAX_LINE_CHARS = 10_000_000


def prompt_from_line(line: str) -> tuple[str, list[ImageBlock]]:
    """The prompt text of one input line, and the images it carries.

    Raises:
        BadInputLine: the line is not JSON, not a user message, has neither text nor an
            image, or holds an image that cannot be sent.
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
    images: list[ImageBlock] = []
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            if kind == "image":
                images.append(_image(block, len(images) + 1))
                continue
            if kind != "text":
                raise BadInputLine(
                    f"content block {kind!r} is not supported; send text and image blocks"
                )
            if not isinstance(block.get("text"), str):
                raise BadInputLine('a text block needs a string "text"')
            parts.append(block["text"])
        text = "\n\n".join(parts)
    else:
        raise BadInputLine('"content" must be a string or a list of text and image blocks')
    if not text.strip() and not images:
        raise BadInputLine("the message has no text")
    if not text.strip():  # an image alone: the vendors refuse a message with empty text
        text = " ".join(f"[{image.name}]" for image in images)
    return text, images


def _image(block: dict[str, Any], number: int) -> ImageBlock:
    name = f"image {number}"
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise BadInputLine(f'{name}: "source" must be {{"type": "base64", "data": ...}}')
    try:
        data = base64.b64decode(str(source.get("data") or ""), validate=True)
    except binascii.Error:
        raise BadInputLine(f"{name}: its data is not valid base64") from None
    try:
        return image_from_bytes(data, name)
    except ImageError as error:
        raise BadInputLine(error.message) from None
