"""Renders scripted replies and faults in the two wire formats: Anthropic Messages, OpenAI Chat.

Streams are lists of SSE events (bytes, one complete event each) so the server can cut, stall or
end them after any event. Shapes follow the vendors' documented payloads.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, Literal

from tests.fakes.llm_script import Fault, Reply, ServerPart, ToolCallPart

Protocol = Literal["anthropic", "openai"]

_ids = itertools.count(1)

_OPENAI_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
}

_OVERFLOW = {
    "anthropic": (
        "invalid_request_error",
        None,
        "prompt is too long: 210000 tokens > 200000 maximum",
    ),
    "openai": (
        "invalid_request_error",
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages resulted "
        "in 131000 tokens. Please reduce the length of the messages.",
    ),
}


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def error_body(protocol: Protocol, fault: Fault) -> dict[str, Any]:
    """The JSON error body a vendor sends with a non-2xx status."""
    error_type, code, message = fault.error_type, fault.code, fault.message
    if error_type == "overflow":
        error_type, code, message = _OVERFLOW[protocol]
    if protocol == "anthropic":
        error = {"type": error_type or "api_error", "message": message}
        return {"type": "error", "error": error, "request_id": f"req_fake_{next(_ids)}"}
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def stream_error_event(protocol: Protocol, fault: Fault) -> bytes:
    """An error delivered inside a 200 stream."""
    if protocol == "anthropic":
        error = {"type": fault.error_type, "message": fault.message}
        return sse({"type": "error", "error": error}, event="error")
    error = {"message": fault.message, "type": fault.error_type, "code": fault.error_type}
    return sse({"error": error})


def _anthropic_usage(reply: Reply) -> dict[str, int]:
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
        "cache_creation_input_tokens": reply.cache_write_tokens,
    }


def _anthropic_block(part: str | ToolCallPart | ServerPart, n: int) -> dict[str, Any]:
    if isinstance(part, ServerPart):
        return part.block
    if isinstance(part, str):
        return {"type": "text", "text": part}
    try:
        arguments = json.loads(part.arguments)
    except ValueError:
        arguments = {}
    return {"type": "tool_use", "id": f"toolu_fake_{n}", "name": part.name, "input": arguments}


def anthropic_body(reply: Reply, model: str) -> dict[str, Any]:
    """A non-streaming Messages API response."""
    n = next(_ids)
    return {
        "id": f"msg_fake_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [_anthropic_block(part, n) for part in reply.parts],
        "stop_reason": reply.stop,
        "stop_sequence": None,
        "usage": _anthropic_usage(reply),
    }


def anthropic_events(reply: Reply, model: str) -> list[bytes]:
    """A Messages API stream: message_start, content blocks, message_delta, message_stop."""
    n = next(_ids)
    start = anthropic_body(reply, model) | {"content": [], "stop_reason": None}
    start["usage"] = _anthropic_usage(reply) | {"output_tokens": 1}
    events = [sse({"type": "message_start", "message": start}, "message_start")]
    events.append(sse({"type": "ping"}, "ping"))
    for index, part in enumerate(reply.parts):
        if isinstance(part, ServerPart):
            block, deltas = _server_block_stream(part.block, reply)
        elif isinstance(part, str):
            block = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in reply.text_pieces(part)]
        else:
            block = {"type": "tool_use", "id": f"toolu_fake_{n}_{index}", "name": part.name}
            block["input"] = {}
            half = len(part.arguments) // 2
            pieces = (part.arguments[:half], part.arguments[half:])
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        start_block = {"type": "content_block_start", "index": index, "content_block": block}
        events.append(sse(start_block, "content_block_start"))
        for delta in deltas:
            event = {"type": "content_block_delta", "index": index, "delta": delta}
            events.append(sse(event, "content_block_delta"))
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop_delta: dict[str, Any] = {"stop_reason": reply.stop, "stop_sequence": None}
    usage = {"output_tokens": reply.output_tokens}
    events.append(
        sse({"type": "message_delta", "delta": stop_delta, "usage": usage}, "message_delta")
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


def _server_block_stream(
    whole: dict[str, Any], reply: Reply
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """How Anthropic streams a server tool's block: a call's input and cited text in
    deltas (``citations_delta`` after the text), a search result whole at its start."""
    if whole.get("type") == "server_tool_use":
        arguments = json.dumps(whole.get("input") or {})
        return whole | {"input": {}}, [{"type": "input_json_delta", "partial_json": arguments}]
    if whole.get("type") == "text":
        deltas = [{"type": "text_delta", "text": p} for p in reply.text_pieces(whole["text"])]
        deltas += [
            {"type": "citations_delta", "citation": citation}
            for citation in whole.get("citations") or []
        ]
        return {"type": "text", "text": "", "citations": []}, deltas
    return whole, []


def _openai_usage(reply: Reply) -> dict[str, Any]:
    prompt = reply.input_tokens + reply.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": reply.output_tokens,
        "total_tokens": prompt + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens},
    }


def _openai_tool_calls(reply: Reply, n: int) -> list[dict[str, Any]]:
    calls = [part for part in reply.parts if isinstance(part, ToolCallPart)]
    return [
        {
            "id": f"call_fake_{n}_{i}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for i, call in enumerate(calls)
    ]


def openai_body(reply: Reply, model: str) -> dict[str, Any]:
    """A non-streaming chat.completion."""
    n = next(_ids)
    text = "".join(part for part in reply.parts if isinstance(part, str))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls := _openai_tool_calls(reply, n):
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "finish_reason": _OPENAI_FINISH[reply.stop]}
    body: dict[str, Any] = {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [choice],
    }
    if not reply.omit_usage:
        body["usage"] = _openai_usage(reply)
    return body


def openai_events(reply: Reply, model: str, include_usage: bool) -> list[bytes]:
    """chat.completion.chunk events ending in ``data: [DONE]``."""
    n = next(_ids)
    head = {"id": f"chatcmpl-fake-{n}", "object": "chat.completion.chunk", "created": 1_700_000_000}
    head["model"] = model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(head | {"choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    for part in reply.parts:
        if isinstance(part, str):
            events += [chunk({"content": piece}) for piece in reply.text_pieces(part)]
    for index, call in enumerate(_openai_tool_calls(reply, n)):
        arguments = call["function"]["arguments"]
        first = call | {"index": index, "function": {"name": call["function"]["name"]}}
        first["function"]["arguments"] = ""
        events.append(chunk({"tool_calls": [first]}))
        half = len(arguments) // 2
        for piece in (arguments[:half], arguments[half:]):
            piece_call = {"index": index, "function": {"arguments": piece}}
            events.append(chunk({"tool_calls": [piece_call]}))
    events.append(chunk({}, _OPENAI_FINISH[reply.stop]))
    if include_usage and not reply.omit_usage:
        events.append(sse(head | {"choices": [], "usage": _openai_usage(reply)}))
    events.append(sse("[DONE]"))
    return events
