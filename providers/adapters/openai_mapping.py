"""Our messages ↔ the OpenAI Chat Completions wire format, as plain dicts (no SDK import).

Shared by the OpenAI adapter and any other OpenAI-style API (llama.cpp's embedded server in
the local adapter), so it works on JSON-shaped dicts, not SDK objects.

Conventions, chosen so a well-formed conversation round-trips losslessly:
- The system prompt is a leading ``system`` message.
- A user message's tool results become ``tool`` messages (they must directly follow the
  assistant's ``tool_calls``), then its text, if any, one ``user`` message; reading back,
  consecutive messages of the same role merge again.
- Text that is empty or only whitespace is left out, and so is an assistant message left with
  nothing to send (an empty reply): the API rejects both.
- An image is an ``image_url`` part holding a ``data:`` URL. A tool message can only hold text,
  so a result's images are announced in it (`IMAGE_ATTACHED`) and follow in the user message
  after the tool messages, with the message's own images and text.
- ``is_error`` has no field on the wire: an error result's content starts with `ERROR_PREFIX`.
- Tool-call arguments that are not a JSON object are kept, not dropped (see
  `providers.conversation.parse_arguments`), so the tool executor can tell the model exactly
  what was wrong; sent back, they go out as the same raw text.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from providers.conversation import encode_arguments, is_blank, is_empty, parse_arguments
from providers.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from providers.provider import StopReason, ToolSpec
from providers.wire_cache import WireCache

ERROR_PREFIX = "[tool error] "
IMAGE_ATTACHED = "[image attached: {names}; it follows in the next user message]"

_FINISH: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}

__all__ = [
    "ERROR_PREFIX",
    "IMAGE_ATTACHED",
    "from_openai_messages",
    "openai_wire",
    "stop_reason",
    "to_openai_messages",
    "to_openai_tools",
    "usage_from_openai",
]


def stop_reason(finish_reason: str | None) -> StopReason:
    """Our stop reason for an OpenAI ``finish_reason``; none at all means incomplete."""
    if finish_reason is None:
        return StopReason.INCOMPLETE
    return _FINISH.get(finish_reason, StopReason.END_TURN)


def usage_from_openai(usage: dict[str, Any] | None) -> Usage:
    """Our `Usage`; cached prompt tokens are split out of ``prompt_tokens``."""
    if not usage:
        return Usage()
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    prompt = int(usage.get("prompt_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs as OpenAI ``function`` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def to_openai_messages(
    system: str, messages: Sequence[Message], wire: WireCache[list[dict[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """The conversation as OpenAI chat messages.

    ``wire``: a cache of `openai_wire` kept by the adapter across requests.
    """
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for part in wire(messages) if wire is not None else map(openai_wire, messages):
        out.extend(part)
    return out


def openai_wire(message: Message) -> list[dict[str, Any]]:
    """The chat messages one of ours becomes (a tool message per result, then its text)."""
    if message.role == "assistant":
        # A reply with neither text nor tool calls would go out as content null without
        # tool_calls, which the API rejects on this and every later request.
        return [] if is_empty(message) else [_assistant_to_openai(message)]
    out: list[dict[str, Any]] = [_tool_message(result) for result in message.tool_results]
    texts = _sendable_texts(message)
    images = message.images
    if images:
        parts = [*map(openai_image, images), *({"type": "text", "text": t} for t in texts)]
        out.append({"role": "user", "content": parts})
    elif texts:
        out.append({"role": "user", "content": _text_content(texts)})
    return out


def _tool_message(result: ToolResultBlock) -> dict[str, Any]:
    content = ERROR_PREFIX + result.content if result.is_error else result.content
    if result.images:
        names = ", ".join(image.name for image in result.images)
        content = f"{content}\n{IMAGE_ATTACHED.format(names=names)}".lstrip("\n")
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}


def openai_image(image: ImageBlock) -> dict[str, Any]:
    """``image`` as a chat ``image_url`` part with a ``data:`` URL."""
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.media_type};base64,{image.data}"},
    }


def _image_in(part: dict[str, Any]) -> ImageBlock | None:
    """Our image for an ``image_url`` part holding a base64 ``data:`` URL (read back by the
    fake server and tests)."""
    url = str((part.get("image_url") or {}).get("url", ""))
    head, _, data = url.partition(";base64,")
    if not head.startswith("data:") or not data:
        return None
    digest = hashlib.sha256(base64.b64decode(data)).hexdigest()
    return ImageBlock(media_type=head.removeprefix("data:"), sha256=digest, data=data)


def _text_content(texts: list[str]) -> str | list[dict[str, Any]]:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": text} for text in texts]


def _sendable_texts(message: Message) -> list[str]:
    return [b.text for b in message.content if isinstance(b, TextBlock) and not is_blank(b)]


def _assistant_to_openai(message: Message) -> dict[str, Any]:
    texts = _sendable_texts(message)
    out: dict[str, Any] = {"role": "assistant", "content": _text_content(texts) if texts else None}
    if calls := message.tool_uses:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": encode_arguments(call.input)},
            }
            for call in calls
        ]
    return out


def from_openai_messages(messages: list[dict[str, Any]]) -> tuple[str, list[Message]]:
    """The inverse of `to_openai_messages`: the system prompt and our messages."""
    system: list[str] = []
    out: list[Message] = []
    for wire in messages:
        role = wire.get("role")
        if role in ("system", "developer"):
            system.append("".join(_texts(wire.get("content"))))
            continue
        blocks = from_openai_message(wire)
        ours = "assistant" if role == "assistant" else "user"
        if out and out[-1].role == ours:
            out[-1] = Message(role=ours, content=[*out[-1].content, *blocks])
        else:
            out.append(Message(role=ours, content=blocks))
    return "\n".join(system), out


def from_openai_message(wire: dict[str, Any]) -> list[Block]:
    """The blocks of one OpenAI message (a tool message becomes a tool result)."""
    if wire.get("role") == "tool":
        content = "".join(_texts(wire.get("content")))
        is_error = content.startswith(ERROR_PREFIX)
        text = content.removeprefix(ERROR_PREFIX)
        return [ToolResultBlock(tool_use_id=wire["tool_call_id"], content=text, is_error=is_error)]
    parts: Any = wire.get("content")
    images = (
        [_image_in(p) for p in parts if p.get("type") == "image_url"]
        if isinstance(parts, list)
        else []
    )
    blocks: list[Block] = [image for image in images if image is not None]
    blocks += [TextBlock(text=text) for text in _texts(parts)]
    for call in wire.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = parse_arguments(function.get("arguments"))
        blocks.append(ToolUseBlock(id=call["id"], name=function.get("name", ""), input=arguments))
    return blocks


def _texts(content: Any) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content if part.get("type") == "text"]
