"""Assembling OpenAI-style chat completions (streamed chunks or whole bodies) into our response.

Works on JSON-shaped dicts so every OpenAI-style source can use it: the server's JSON as it
came (the OpenAI adapter), llama.cpp (xllamacpp). Tolerant of what such servers do:
no usage, chunks with empty ``choices``, tool-call arguments in one chunk or many, missing
tool-call ids, and ``finish_reason: "stop"`` after tool calls.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from providers.adapters.openai_mapping import from_openai_message, stop_reason
from providers.adapters.openai_mapping import usage_from_openai as _usage
from providers.conversation import parse_arguments
from providers.errors import read_with, reading
from providers.messages import Block, Message, TextBlock, ToolUseBlock, Usage
from providers.provider import ChatResponse, DeltaHandler, StopReason, TextDelta, ToolUseDelta

__all__ = ["ChunkAccumulator", "response_from_completion"]

_fallback_ids = itertools.count(1)


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChunkAccumulator:
    """Feeds ``chat.completion.chunk`` dicts to a delta handler and builds the final response."""

    def __init__(self, on_delta: DeltaHandler | None = None) -> None:
        self._on_delta = on_delta
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.model = ""

    def add(self, chunk: Any) -> None:
        """Take one chunk into account; one of the wrong shape raises `MalformedAnswer`."""
        deltas: list[TextDelta | ToolUseDelta] = []
        read_with(lambda answer: self._read(answer, deltas), chunk)
        if self._on_delta is not None:
            for delta in deltas:
                self._on_delta(delta)

    def _read(self, chunk: dict[str, Any], deltas: list[TextDelta | ToolUseDelta]) -> None:
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
        self.model = chunk.get("model") or self.model
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if text := delta.get("content"):
                if not isinstance(text, str):
                    raise TypeError("content is not text")
                self._text.append(text)
                deltas.append(TextDelta(text=text))
            for call in delta.get("tool_calls") or []:
                self._add_call(call, deltas)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _add_call(self, call: dict[str, Any], deltas: list[TextDelta | ToolUseDelta]) -> None:
        index = call.get("index")
        index = index if isinstance(index, int) else len(self._calls)
        pending = self._calls.setdefault(index, _PendingCall())
        function = call.get("function") or {}
        started = not pending.id and not pending.name
        pending.id = call.get("id") or pending.id
        pending.name = pending.name or function.get("name") or ""
        arguments = function.get("arguments") or ""
        if not all(isinstance(text, str) for text in (pending.id, pending.name, arguments)):
            raise TypeError("a tool call's id, name or arguments is not text")
        pending.arguments.append(arguments)
        if started:
            pending.id = pending.id or f"call_{next(_fallback_ids)}"
            deltas.append(ToolUseDelta(index=index, id=pending.id, name=pending.name))
        if arguments:
            deltas.append(ToolUseDelta(index=index, partial_json=arguments))

    def message(self) -> Message:
        """The assistant message streamed so far."""
        blocks: list[Block] = [TextBlock(text="".join(self._text))] if self._text else []
        for _, call in sorted(self._calls.items()):
            arguments = parse_arguments("".join(call.arguments))
            blocks.append(ToolUseBlock(id=call.id, name=call.name, input=arguments))
        return Message(role="assistant", content=blocks)

    def response(self, *, provider: str = "", request_id: str | None = None) -> ChatResponse:
        """The finished response; no finish reason seen means `StopReason.INCOMPLETE`."""
        message = self.message()
        return ChatResponse(
            message=message,
            stop_reason=_stop(self.finish_reason, message),
            usage=self.usage,
            model=self.model,
            provider=provider,
            request_id=request_id,
        )


def response_from_completion(
    body: dict[str, Any], *, provider: str = "", request_id: str | None = None
) -> ChatResponse:
    """Our response for a non-streamed ``chat.completion`` dict (empty choices: incomplete);
    `MalformedAnswer` if it has another shape."""
    with reading(body):
        return _completion(body, provider=provider, request_id=request_id)


def _completion(body: dict[str, Any], *, provider: str, request_id: str | None) -> ChatResponse:
    choices = body.get("choices") or []
    first = choices[0] if choices else {}
    wire = first.get("message") or {"role": "assistant"}
    message = Message(role="assistant", content=from_openai_message(wire))
    return ChatResponse(
        message=message,
        stop_reason=_stop(first.get("finish_reason"), message),
        usage=_usage(body.get("usage")),
        model=body.get("model") or "",
        provider=provider,
        request_id=request_id,
    )


def _stop(finish_reason: str | None, message: Message) -> StopReason:
    reason = stop_reason(finish_reason)
    # Some compatible servers say "stop" after tool calls; the calls are what matters.
    if reason == StopReason.END_TURN and message.tool_uses:
        return StopReason.TOOL_USE
    return reason
