"""Strict validators of what each vendor accepts in a request's ``messages``.

Each rule here is one the real API enforces with a 400 (and since a session sends its whole
history again on every request, one broken message breaks every later turn). They are stricter
than the APIs where an API quietly repairs (Anthropic joins consecutive user messages; here
roles must alternate), so a pass here means the request is accepted as sent.
"""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_problem(media_type: str, data: str) -> str | None:
    """What either API would reject in a base64 image: a type it does not take, bytes that
    are not that image, or one over 5 MB or 8000 pixels a side (Anthropic's limits)."""
    from PIL import Image

    if media_type not in IMAGE_TYPES:
        return f"image type {media_type!r} is not supported"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "image data is not base64"
    if len(raw) > MAX_IMAGE_BYTES:
        return f"image is {len(raw)} bytes, over 5 MB"
    try:
        with Image.open(io.BytesIO(raw)) as picture:
            picture.load()
            found, size = picture.format, picture.size
    except Exception as error:  # any failure to decode is the API's 400
        return f"image cannot be decoded ({error})"
    if f"image/{(found or '').lower()}" != media_type.replace("jpg", "jpeg"):
        return f"image is {found}, declared {media_type}"
    if max(size) > MAX_IMAGE_SIDE:
        return f"image is {size}, over {MAX_IMAGE_SIDE} pixels a side"
    return None


def _anthropic_image(block: dict[str, Any]) -> str | None:
    source = block.get("source") or {}
    if source.get("type") != "base64":
        return "image source is not base64"
    return image_problem(str(source.get("media_type")), str(source.get("data")))


def _openai_image(part: dict[str, Any]) -> str | None:
    url = str((part.get("image_url") or {}).get("url", ""))
    head, _, data = url.partition(";base64,")
    if not head.startswith("data:"):
        return "image_url is not a base64 data URL"
    return image_problem(head.removeprefix("data:"), data)


def anthropic_problems(wire: list[dict[str, Any]]) -> list[str]:
    """What the Messages API would reject in ``wire`` (its ``messages``)."""
    problems: list[str] = []
    if not wire:
        return ["no messages"]
    if wire[0]["role"] != "user":
        problems.append("first message is not from the user")
    seen_calls: set[str] = set()
    for index, message in enumerate(wire):
        where = f"messages.{index}"
        if index and wire[index - 1]["role"] == message["role"]:
            problems.append(f"{where}: two {message['role']} messages in a row")
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not content:
            problems.append(f"{where}: empty content")
        for block in content:
            if block["type"] == "text" and not block["text"].strip():
                problems.append(f"{where}: text block without non-whitespace text")
            nested = block.get("content") if block["type"] == "tool_result" else None
            for image in [block, *(nested if isinstance(nested, list) else [])]:
                if image["type"] == "image" and (why := _anthropic_image(image)):
                    problems.append(f"{where}: {why}")
                if image["type"] == "image" and message["role"] != "user":
                    problems.append(f"{where}: image in an assistant message")
        kinds = [block["type"] for block in content]
        results = [block["tool_use_id"] for block in content if block["type"] == "tool_result"]
        if message["role"] == "assistant" and results:
            problems.append(f"{where}: tool_result in an assistant message")
        if message["role"] == "user" and "tool_use" in kinds:
            problems.append(f"{where}: tool_use in a user message")
        if kinds[: len(results)] != ["tool_result"] * len(results):
            problems.append(f"{where}: tool_result blocks must come first")
        previous = wire[index - 1] if index else None
        called = (
            [b["id"] for b in previous["content"] if b["type"] == "tool_use"]
            if previous is not None
            and previous["role"] == "assistant"
            and isinstance(previous["content"], list)
            else []
        )
        if message["role"] == "user" and sorted(results) != sorted(called):
            problems.append(f"{where}: tool_result ids {results} do not answer {called}")
        calls = [block["id"] for block in content if block["type"] == "tool_use"]
        if seen_calls & set(calls) or len(calls) != len(set(calls)):
            problems.append(f"{where}: tool_use ids must be unique")
        seen_calls |= set(calls)
    if wire[-1]["role"] == "assistant" and any(
        block.get("type") == "tool_use" for block in wire[-1]["content"]
    ):
        problems.append("the last message's tool_use blocks are unanswered")
    return problems


def openai_problems(wire: list[dict[str, Any]]) -> list[str]:
    """What Chat Completions would reject in ``wire`` (its ``messages``)."""
    problems: list[str] = []
    chat = [message for message in wire if message["role"] not in ("system", "developer")]
    if not chat:
        return ["no messages"]
    if chat[0]["role"] != "user":
        problems.append("first message (after the system prompt) is not from the user")
    open_calls: list[str] = []
    seen_calls: set[str] = set()
    for index, message in enumerate(wire):
        where = f"messages.{index}"
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                problems.append(f"{where}: tool message without its call")
            else:
                open_calls.remove(message["tool_call_id"])
            if not isinstance(message.get("content"), str):
                problems.append(f"{where}: tool message content must be a string")
            continue
        if open_calls:
            problems.append(f"{where}: tool calls {sorted(open_calls)} unanswered")
            open_calls = []
        content = message.get("content")
        if role == "assistant":
            calls = [call["id"] for call in message.get("tool_calls") or []]
            if content is None and not calls:
                problems.append(f"{where}: assistant message without content or tool_calls")
            if seen_calls & set(calls) or len(calls) != len(set(calls)):
                problems.append(f"{where}: tool call ids must be unique")
            seen_calls |= set(calls)
            open_calls = calls
        elif role == "user" and not content:
            problems.append(f"{where}: empty user message")
        parts = content if isinstance(content, list) else []
        for part in parts:
            if part.get("type") == "image_url" and role != "user":
                problems.append(f"{where}: image_url in a {role} message")
            elif part.get("type") == "image_url" and (why := _openai_image(part)):
                problems.append(f"{where}: {why}")
    if open_calls:
        problems.append("the last tool calls are unanswered")
    return problems


MAX_CACHE_BREAKPOINTS = 4


def cache_breakpoints(body: dict[str, Any]) -> int:
    """Blocks marked ``cache_control`` in an Anthropic request: system, tools and messages."""
    system = body.get("system")
    blocks = [
        *(system if isinstance(system, list) else []),
        *(body.get("tools") or []),
        *(
            block
            for message in body.get("messages") or []
            if isinstance(message["content"], list)
            for block in message["content"]
        ),
    ]
    return sum("cache_control" in block for block in blocks)


def request_problems(protocol: str, body: dict[str, Any]) -> list[str]:
    """What the vendor of ``protocol`` would reject in a recorded request ``body``."""
    messages = body.get("messages") or []
    if protocol != "anthropic":
        return openai_problems(messages)
    problems = anthropic_problems(messages)
    if cache_breakpoints(body) > MAX_CACHE_BREAKPOINTS:
        problems.append(f"more than {MAX_CACHE_BREAKPOINTS} blocks have cache_control")
    return problems
