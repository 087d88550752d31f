"""What the fake LLM server answers: scripted replies and faults, independent of wire format.

A test scripts steps in order (optionally per model); the server pops one per request and renders
it in the protocol of the path that was hit (see `tests.fakes.llm_wire`).

    fake_llm.script(Reply.text("hi"), Fault.status(429, headers={"retry-after": "2"}))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

StopName = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"]


@dataclass(frozen=True)
class ToolCallPart:
    """A tool call inside a reply; ``arguments`` is the raw JSON text sent on the wire."""

    name: str
    arguments: str


@dataclass(frozen=True)
class ServerPart:
    """A block of Anthropic's server tools inside a reply, as the wire has it:
    ``server_tool_use``, ``web_search_tool_result``, or text carrying ``citations``. The
    OpenAI renderer leaves it out (no such blocks there)."""

    block: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """A successful answer: text and/or tool calls, a stop reason and usage numbers.

    ``stop`` uses Anthropic's vocabulary; the OpenAI renderer translates it
    (end_turn → stop, tool_use → tool_calls, max_tokens → length, refusal → content_filter).
    """

    parts: tuple[str | ToolCallPart | ServerPart, ...]
    stop: StopName = "end_turn"
    input_tokens: int = 11
    output_tokens: int = 7
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    omit_usage: bool = False
    delta_chars: int = 0
    """Stream each text part in pieces of this many characters (0: in two halves)."""
    delta_pause: float = 0.0
    """Seconds the server waits between two streamed events (a model's writing speed)."""

    def text_pieces(self, text: str) -> list[str]:
        """How a text part is cut into streamed deltas."""
        if self.delta_chars <= 0:
            half = len(text) // 2
            return [text[:half], text[half:]]
        size = self.delta_chars
        return [text[start : start + size] for start in range(0, len(text), size)] or [""]

    @classmethod
    def text(cls, text: str, *, stop: StopName = "end_turn", **options: Any) -> Reply:
        """A reply holding one text block."""
        return cls(parts=(text,), stop=stop, **options)

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        text: str = "",
        raw_arguments: str | None = None,
        **options: Any,
    ) -> Reply:
        """A reply that calls one tool; ``raw_arguments`` sends exactly that text (bad JSON too)."""
        raw = raw_arguments if raw_arguments is not None else json.dumps(arguments or {})
        parts: tuple[str | ToolCallPart | ServerPart, ...] = (text,) if text else ()
        options.setdefault("stop", "tool_use")
        return cls(parts=(*parts, ToolCallPart(name, raw)), **options)


FaultKind = Literal[
    "status",
    "drop",
    "hang",
    "cut_stream",
    "stall",
    "end_early",
    "stream_error",
    "not_json",
    "bad_event",
]


@dataclass(frozen=True)
class Fault:
    """A failure the server acts out. Build one with the class methods."""

    kind: FaultKind
    status_code: int = 500
    error_type: str | None = None
    code: str | None = None
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    content_type: str = "application/json"
    seconds: float = 0.0
    after_events: int = 0
    reply: Reply | None = None

    @classmethod
    def status(
        cls,
        status: int,
        error_type: str | None = None,
        *,
        code: str | None = None,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """An HTTP error with a JSON error body in the protocol's own shape."""
        return cls(
            kind="status",
            status_code=status,
            error_type=error_type,
            code=code,
            message=message or f"fake error {status}",
            headers=headers or {},
        )

    @classmethod
    def html(cls, status: int = 502) -> Fault:
        """An HTML error page, as a proxy or load balancer sends."""
        page = f"<html><body><h1>{status} Bad Gateway</h1></body></html>"
        return cls(kind="status", status_code=status, raw_body=page, content_type="text/html")

    @classmethod
    def overflow(cls) -> Fault:
        """The context-window error each vendor really sends (400)."""
        return cls(kind="status", status_code=400, error_type="overflow")

    @classmethod
    def drop(cls) -> Fault:
        """Reset the connection before any response."""
        return cls(kind="drop")

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Send nothing for ``seconds`` (released early when the script is reset), then drop."""
        return cls(kind="hang", seconds=seconds)

    @classmethod
    def cut_stream(cls, after_events: int = 3, reply: Reply | None = None) -> Fault:
        """Stream ``after_events`` events of ``reply``, then reset the connection mid-body."""
        return cls(kind="cut_stream", after_events=after_events, reply=reply)

    @classmethod
    def stall(cls, seconds: float, after_events: int = 2, reply: Reply | None = None) -> Fault:
        """Stream ``after_events`` events, go silent for ``seconds``, then finish normally."""
        return cls(kind="stall", seconds=seconds, after_events=after_events, reply=reply)

    @classmethod
    def end_early(cls, after_events: int = 3, reply: Reply | None = None) -> Fault:
        """End the body cleanly after ``after_events`` events: no stop event, no [DONE]."""
        return cls(kind="end_early", after_events=after_events, reply=reply)

    @classmethod
    def stream_error(
        cls, error_type: str = "overloaded_error", message: str = "", after_events: int = 2
    ) -> Fault:
        """An in-stream error event (Anthropic ``event: error``, OpenAI ``data: {"error"}``)."""
        return cls(
            kind="stream_error",
            error_type=error_type,
            message=message or f"fake in-stream {error_type}",
            after_events=after_events,
        )

    @classmethod
    def bad_event(
        cls, data: str, event: str = "content_block_start", after_events: int = 1
    ) -> Fault:
        """Stream ``after_events`` events, then one whose data is ``data`` as given (named
        ``event`` on the Anthropic protocol), then the rest of the reply."""
        return cls(kind="bad_event", raw_body=data, error_type=event, after_events=after_events)

    @classmethod
    def bad_body(cls, data: str) -> Fault:
        """A 200 JSON response whose body is ``data`` as given (asked for without streaming)."""
        return cls(kind="not_json", raw_body=data)

    @classmethod
    def not_json(cls, content_type: str = "application/json") -> Fault:
        """A 200 response whose body is not JSON (labelled ``content_type``)."""
        return cls(kind="not_json", content_type=content_type)

    @property
    def partial_reply(self) -> Reply:
        """The reply a stream fault streams before it strikes."""
        return self.reply or Reply.text("partial answer that will not finish")


Step = Reply | Fault
