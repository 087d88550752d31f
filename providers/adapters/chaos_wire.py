"""What chaos mode reads and rewrites in wire data, for both vendors' formats.

- `compactable`: whether a request's conversation holds something compaction could take
  away (only such a request gets the context-length error of the ``overflow`` profile).
- `cut_anthropic_events`, `cut_openai_chunks` (the offline model's chunks too) and
  `cut_answer_body`: a real answer rewritten as if it had hit the output limit, cut half-way
  through its last tool call's JSON arguments, or through its text when it calls no tool.

Pure functions of dicts and bytes; they import no SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

COMPACTABLE_CHARS = 2_000
"""Characters of a conversation compaction must be able to take away before it overflows."""

TRIM_FLOOR = 2_000
"""What compaction keeps of a result the model has not read (`compaction.stages.TRIM_FLOOR`)."""


def compactable(body: Mapping[str, Any]) -> bool:
    """Whether the conversation of a request body (either vendor's) has at least
    `COMPACTABLE_CHARS` that compaction could take away: turns before the latest prompt,
    tool results the model has read, and what trimming cuts from those it has not."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    latest = max((i for i, m in enumerate(messages) if _is_prompt(m)), default=0)
    unread = _unread_from(messages)
    removable = 0
    for index, message in enumerate(messages):
        if index < latest:
            removable += len(json.dumps(message.get("content"))) + _calls_size(message)
            continue
        for result in _results(message):
            removable += max(0, result - TRIM_FLOOR) if index >= unread else result
    return removable >= COMPACTABLE_CHARS


def _is_prompt(message: Mapping[str, Any]) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content)
    return any(_field(part, "type") == "text" for part in content or [])


def _unread_from(messages: list[Mapping[str, Any]]) -> int:
    """Index of the first message holding results the model has not read: the last message
    (Anthropic), or the run of ``tool`` messages at the end (OpenAI)."""
    start = len(messages)
    while start > 0 and messages[start - 1].get("role") == "tool":
        start -= 1
    return start if start < len(messages) else max(0, len(messages) - 1)


def _results(message: Mapping[str, Any]) -> list[int]:
    """Sizes of the tool results in one message."""
    content = message.get("content")
    if message.get("role") == "tool":
        return [len(json.dumps(content))]
    if not isinstance(content, list):
        return []
    return [
        len(json.dumps(_field(p, "content"))) for p in content if _field(p, "type") == "tool_result"
    ]


def _calls_size(message: Mapping[str, Any]) -> int:
    return len(json.dumps(message.get("tool_calls"))) if message.get("tool_calls") else 0


def _field(part: object, key: str) -> Any:
    return part.get(key) if isinstance(part, Mapping) else None


def _half(text: str) -> str:
    """The first half of ``text`` (at least one character of a non-empty one)."""
    return text[: max(1, len(text) // 2)] if text else text


SseEvent = tuple[str | None, Any]
"""One server-sent event: its ``event:`` name (None when it has none) and its decoded data."""


def parse_sse(raw: bytes) -> list[SseEvent]:
    """The events of a whole SSE body (comments and empty events left out)."""
    events: list[SseEvent] = []
    for chunk in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in chunk.decode("utf-8", "replace").split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data:
            text = "\n".join(data)
            events.append((name, text if text == "[DONE]" else json.loads(text)))
    return events


def render_sse(events: list[SseEvent]) -> bytes:
    """``events`` as an SSE body."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {payload}\n\n")
    return "".join(out).encode()


def cut_anthropic_events(events: list[SseEvent]) -> list[SseEvent]:
    """A Messages API stream cut as at ``max_tokens``: the last tool call's JSON arguments
    (or, with no call, the last text) stop half-way, and the message ends there."""
    deltas = [d for n, d in events if n == "content_block_delta" and isinstance(d, dict)]
    tools = [d["index"] for d in deltas if d["delta"].get("type") == "input_json_delta"]
    texts = [d["index"] for d in deltas if d["delta"].get("type") == "text_delta"]
    target = tools[-1] if tools else texts[-1] if texts else None
    key = "partial_json" if tools else "text"
    whole = "".join(d["delta"].get(key, "") for d in deltas if d["index"] == target)
    room = len(_half(whole))
    usage: dict[str, Any] = {"output_tokens": 1}
    out: list[SseEvent] = []
    for name, data in events:
        if name == "message_delta":
            usage = data.get("usage") or usage
        if name in ("message_delta", "message_stop"):
            continue
        index = data.get("index") if isinstance(data, dict) else None
        if target is not None and isinstance(index, int) and index > target:
            continue  # blocks after the cut were never written
        if name == "content_block_delta" and index == target:
            piece = data["delta"].get(key, "")
            if room <= 0:
                continue
            data = data | {"delta": data["delta"] | {key: piece[:room]}}
            room -= len(piece)
        out.append((name, data))
    stop = {"stop_reason": "max_tokens", "stop_sequence": None}
    out.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": usage}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def cut_openai_chunks(chunks: list[Any]) -> list[Any]:
    """Chat-completion chunks cut as at the output limit (``finish_reason: "length"``): the
    last tool call's arguments (or, with no call, the text) stop half-way."""
    pieces: list[tuple[int | None, str]] = []  # (tool call index or None for text, piece)
    for chunk in chunks:
        delta = _delta(chunk)
        if delta.get("content"):
            pieces.append((None, delta["content"]))
        for call in delta.get("tool_calls") or []:
            pieces.append(
                (call.get("index", 0), (call.get("function") or {}).get("arguments") or "")
            )
    calls = [index for index, _ in pieces if index is not None]
    target = calls[-1] if calls else None
    room = len(_half("".join(piece for index, piece in pieces if index == target)))
    out: list[Any] = []
    usage = next((c for c in chunks if isinstance(c, dict) and c.get("usage")), None)
    head = next((c for c in chunks if isinstance(c, dict) and c.get("choices")), {})
    for chunk in chunks:
        if not isinstance(chunk, dict) or not chunk.get("choices"):
            continue
        choice = chunk["choices"][0]
        if choice.get("finish_reason"):
            continue
        delta = dict(choice.get("delta") or {})
        if target is None and delta.get("content"):
            if room <= 0:
                break
            delta["content"], room = delta["content"][:room], room - len(delta["content"])
        elif target is not None and delta.get("tool_calls"):
            kept = []
            for call in delta["tool_calls"]:
                if call.get("index", 0) > target:
                    continue
                arguments = (call.get("function") or {}).get("arguments") or ""
                if call.get("index", 0) == target and arguments:
                    if room <= 0:
                        continue
                    call = call | {"function": call["function"] | {"arguments": arguments[:room]}}
                    room -= len(arguments)
                kept.append(call)
            if not kept:
                continue
            delta["tool_calls"] = kept
        out.append(chunk | {"choices": [choice | {"delta": delta}]})
    end = {"index": 0, "delta": {}, "finish_reason": "length"}
    out.append(
        {key: head[key] for key in ("id", "object", "created", "model") if key in head}
        | {"choices": [end]}
    )
    if usage is not None:  # llama.cpp sends it (and its timings) with the finish reason
        out.append(usage | {"choices": []})
    return out


def _delta(chunk: Any) -> dict[str, Any]:
    if not isinstance(chunk, dict) or not chunk.get("choices"):
        return {}
    return chunk["choices"][0].get("delta") or {}


def cut_answer_body(body: dict[str, Any]) -> dict[str, Any]:
    """A whole (non-streamed) answer of either vendor cut as at the output limit."""
    if isinstance(body.get("content"), list):  # Anthropic
        blocks = list(body["content"])
        calls = [i for i, b in enumerate(blocks) if b.get("type") == "tool_use"]
        if calls:  # its arguments were cut: none of them parse
            blocks = [*blocks[: calls[-1]], blocks[calls[-1]] | {"input": {}}]
        elif blocks and blocks[-1].get("type") == "text":
            blocks[-1] = blocks[-1] | {"text": _half(blocks[-1]["text"])}
        return body | {"content": blocks, "stop_reason": "max_tokens"}
    choices = body.get("choices") or [{}]
    message = dict(choices[0].get("message") or {})
    if message.get("tool_calls"):
        *first, last = message["tool_calls"]
        arguments = _half(last["function"].get("arguments") or "")
        message["tool_calls"] = [
            *first,
            last | {"function": last["function"] | {"arguments": arguments}},
        ]
    elif message.get("content"):
        message["content"] = _half(message["content"])
    choice = choices[0] | {"message": message, "finish_reason": "length"}
    return body | {"choices": [choice, *choices[1:]]}
