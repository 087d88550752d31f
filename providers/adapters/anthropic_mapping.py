"""Our messages ↔ the Anthropic Messages wire format, as plain dicts (no SDK import).

Blocks map one to one (``text``, ``tool_use``, ``tool_result``, ``image`` as a base64 source;
a result's images go inside its ``content``, after its text), so conversations round-trip
losslessly, except that text blocks that are empty or only whitespace are left out on the way out,
and so is a message left with nothing to send: the API rejects both with a 400, and since the
history is sent again on every request, one such reply would break every later turn.
Streamed tool input that is not a JSON object is kept as
``{RAW_ARGUMENTS_KEY: "<the text>"}`` (see `providers.conversation`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from operator import eq, itemgetter
from typing import Any

from providers.conversation import is_blank, parse_arguments
from providers.errors import read_with
from providers.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from providers.provider import (
    ChatResponse,
    DeltaHandler,
    StopReason,
    TextDelta,
    ToolSpec,
    ToolUseDelta,
)
from providers.wire_cache import WireCache

__all__ = [
    "CACHE_BREAKPOINT",
    "EventAccumulator",
    "anthropic_blocks",
    "anthropic_message",
    "from_anthropic_messages",
    "response_from_message",
    "server_blocks",
    "stop_reason",
    "to_anthropic_messages",
    "to_anthropic_tools",
    "usage_from_anthropic",
    "with_cache_breakpoints",
]

_STOP: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "refusal": StopReason.REFUSAL,
    "model_context_window_exceeded": StopReason.CONTEXT_WINDOW,
    "pause_turn": StopReason.PAUSED,
}


def stop_reason(reason: str | None) -> StopReason:
    """Our stop reason for Anthropic's; none at all means incomplete."""
    if reason is None:
        return StopReason.INCOMPLETE
    return _STOP.get(reason, StopReason.END_TURN)


def usage_from_anthropic(usage: dict[str, Any] | None) -> Usage:
    """Our `Usage` from Anthropic's usage dict (cache reads and writes included)."""
    usage = usage or {}
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
    )


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Tool specs in the Messages API shape."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def to_anthropic_messages(
    messages: Sequence[Message], wire: WireCache[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The conversation as Messages API ``messages`` (messages with nothing to send left out).

    Leaving out an empty message may put two user messages in a row; they go out joined, as
    one message (tool results first), as the API's rules ask. ``wire``: a cache of
    `anthropic_message` kept by the adapter across requests; a message that is not joined
    goes out as the very dict it keeps (`JsonBody` encodes it once).
    """
    wired = wire(messages) if wire is not None else [anthropic_message(m) for m in messages]
    roles = list(map(itemgetter("role"), wired))
    if all(map(itemgetter("content"), wired)) and not any(map(eq, roles, roles[1:])):
        return wired  # nothing to leave out or join (checked in C: this runs every request)
    out: list[dict[str, Any]] = []
    for message in wired:
        if not message["content"]:
            continue
        if out and out[-1]["role"] == message["role"]:
            joined = [*out[-1]["content"], *message["content"]]
            results = [block for block in joined if block["type"] == "tool_result"]
            others = [block for block in joined if block["type"] != "tool_result"]
            out[-1] = {"role": message["role"], "content": [*results, *others]}
        else:
            out.append(message)
    return out


CACHE_BREAKPOINT = {"type": "ephemeral"}
"""Anthropic's prompt cache marker: the request's prefix up to this block is cached (~5 min)."""


def with_cache_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with prompt-cache breakpoints on the last block of the last message and of
    the user message before it (where the previous request of the turn ended).

    Every step resends the whole history; cached, its prefix is read at a tenth of the price
    and without being processed again. The breakpoint where the previous request ended finds
    what that request cached even when a step added more than the API's lookback of blocks.
    The marked blocks are copies: the wire dicts are shared with later requests
    (`WireCache`), and a stale marker would count against the API's limit of four.
    """
    marked = list(messages)
    users: list[int] = []  # the last two user messages, found from the end
    for index in range(len(marked) - 1, -1, -1):
        if marked[index]["role"] == "user":
            users.insert(0, index)
            if len(users) == 2:
                break
    for index in {len(marked) - 1, *users[-2:-1]} if marked else ():
        message = marked[index]
        *rest, last = message["content"]
        marked[index] = message | {"content": [*rest, last | {"cache_control": CACHE_BREAKPOINT}]}
    return marked


def anthropic_message(message: Message) -> dict[str, Any]:
    """``message`` as a Messages API message (its content may be empty: nothing to send)."""
    return {"role": message.role, "content": anthropic_blocks(message)}


def anthropic_blocks(message: Message) -> list[dict[str, Any]]:
    """``message``'s content as Messages API blocks, whitespace-only text left out."""
    return [_block_out(block) for block in message.content if not is_blank(block)]


def _block_out(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ImageBlock):
        return anthropic_image(block)
    content: str | list[dict[str, Any]] = block.content
    if block.images:
        text = [{"type": "text", "text": block.content}] if block.content.strip() else []
        content = [*text, *map(anthropic_image, block.images)]
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": content,
        "is_error": block.is_error,
    }


def anthropic_image(image: ImageBlock) -> dict[str, Any]:
    """``image`` as a Messages API image block with a base64 source."""
    source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


def _image_in(wire: dict[str, Any]) -> ImageBlock | None:
    """Our image for a base64 image block (the fake server and tests read requests back)."""
    source = wire.get("source") or {}
    if source.get("type") != "base64":
        return None
    data = str(source.get("data", ""))
    digest = hashlib.sha256(base64.b64decode(data)).hexdigest()
    return ImageBlock(media_type=source.get("media_type"), sha256=digest, data=data)


def from_anthropic_messages(messages: list[dict[str, Any]]) -> list[Message]:
    """The inverse of `to_anthropic_messages` (string content becomes one text block)."""
    return [
        Message(role=wire["role"], content=from_anthropic_content(wire["content"]))
        for wire in messages
    ]


def from_anthropic_content(content: str | list[dict[str, Any]]) -> list[Block]:
    """Our blocks for Anthropic content; block types we do not model (thinking, ...) are skipped."""
    if isinstance(content, str):
        return [TextBlock(text=content)]
    blocks: list[Block] = []
    for wire in content:
        kind = wire.get("type")
        if kind == "text":
            blocks.append(TextBlock(text=wire.get("text", "")))
        elif kind == "tool_use":
            arguments = wire.get("input")
            arguments = arguments if isinstance(arguments, dict) else {}
            blocks.append(ToolUseBlock(id=wire["id"], name=wire["name"], input=arguments))
        elif kind == "image" and (image := _image_in(wire)) is not None:
            blocks.append(image)
        elif kind == "tool_result":
            parts = wire.get("content")
            images = [_image_in(part) for part in parts] if isinstance(parts, list) else []
            blocks.append(
                ToolResultBlock(
                    tool_use_id=wire["tool_use_id"],
                    content=_result_text(parts),
                    is_error=bool(wire.get("is_error")),
                    images=tuple(image for image in images if image is not None),
                )
            )
    return blocks


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return str(content or "")


def response_from_message(
    body: dict[str, Any], *, provider: str = "", request_id: str | None = None
) -> ChatResponse:
    """Our response for a Messages API response dict; `MalformedAnswer` if it has another
    shape."""
    return read_with(
        lambda answer: _response(answer, provider=provider, request_id=request_id), body
    )


_OURS = frozenset({"text", "tool_use", "tool_result"})


def server_blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks of ``content`` a server tool produced (``server_tool_use``,
    ``web_search_tool_result``, ...) and the text blocks that cite them."""
    return [
        block
        for block in content
        if block.get("type") not in _OURS
        or (block.get("type") == "text" and block.get("citations"))
    ]


def _response(body: dict[str, Any], *, provider: str, request_id: str | None) -> ChatResponse:
    content = body.get("content", [])
    return ChatResponse(
        message=Message(role="assistant", content=from_anthropic_content(content)),
        server_blocks=server_blocks(content) if isinstance(content, list) else [],
        stop_reason=stop_reason(body.get("stop_reason")),
        usage=usage_from_anthropic(body.get("usage")),
        model=body.get("model") or "",
        provider=provider,
        request_id=request_id,
    )


class EventAccumulator:
    """Feeds Messages API stream events (the server's dicts) to a delta handler; builds the
    response. An event of the wrong shape raises `MalformedAnswer`."""

    def __init__(self, on_delta: DeltaHandler | None = None) -> None:
        self._on_delta = on_delta
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self.model = ""
        self.finished = False

    def add(self, event: Any) -> None:
        """Take one stream event into account."""
        delta = read_with(self._read, event)
        if delta is not None and self._on_delta is not None:
            self._on_delta(delta)

    def _read(self, event: dict[str, Any]) -> TextDelta | ToolUseDelta | None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.model = message.get("model") or self.model
            self._usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            return self._start_block(_index(event), event.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._delta(_index(event), event.get("delta") or {})
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason") or self._stop
            usage = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            self._usage.update(usage)
        elif kind == "message_stop":
            self.finished = True
        return None

    def _start_block(self, index: int, block: dict[str, Any]) -> TextDelta | ToolUseDelta | None:
        self._blocks[index] = dict(block)
        if block.get("type") == "tool_use":
            self._json[index] = []
            return ToolUseDelta(index=index, id=block.get("id"), name=block.get("name"))
        if block.get("type") == "text" and block.get("text"):
            return TextDelta(text=block["text"])
        return None

    def _delta(self, index: int, delta: dict[str, Any]) -> TextDelta | ToolUseDelta | None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        if delta.get("type") == "text_delta":
            text = delta.get("text", "")
            block["text"] = block.get("text", "") + text
            return TextDelta(text=text)
        if delta.get("type") == "input_json_delta":
            partial = delta.get("partial_json", "")
            self._json.setdefault(index, []).append(partial)
            if block.get("type") != "tool_use":
                return None  # a server tool's input: the server runs it, nobody streams it
            return ToolUseDelta(index=index, partial_json=partial)
        if delta.get("type") == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation") or {})
        return None

    def response(self, *, provider: str = "", request_id: str | None = None) -> ChatResponse:
        """The response so far; without a stop reason it is `StopReason.INCOMPLETE`."""
        content = []
        for index, block in sorted(self._blocks.items()):
            if index in self._json:
                block = block | {"input": parse_arguments("".join(self._json[index]))}
            if block.get("type") != "text" or block.get("text"):
                content.append(block)
        body = {"content": content, "stop_reason": self._stop, "usage": self._usage}
        return response_from_message(
            body | {"model": self.model}, provider=provider, request_id=request_id
        )


def _index(event: dict[str, Any]) -> int:
    index = event["index"]
    if not isinstance(index, int):
        raise TypeError("index is not a number")
    return index
