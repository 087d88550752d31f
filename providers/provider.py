"""The `Provider` protocol: one async call that sends a conversation and streams the answer.

Adapters (`providers.adapters.anthropic`, `providers.adapters.openai`) implement it for one
vendor each; `recovery.RecoveringProvider` implements it around a chain of them, so callers
cannot tell whether recovery is there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from providers.messages import CachingModel, Message, Usage
from providers.ratelimit import RateLimits


class StopReason(StrEnum):
    """Why a response ended, in our terms (not the vendor's)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    REFUSAL = "refusal"
    CONTEXT_WINDOW = "context_window"
    """The output was cut because the context window is full."""
    INCOMPLETE = "incomplete"
    """The stream ended without a stop reason: a failure, never a success."""
    PAUSED = "pause_turn"
    """A server-side tool (Anthropic's web search) paused a long turn: what came is whole,
    and sending it back would go on. Not a failure: retrying would run (and bill) it again."""


class Purpose(StrEnum):
    """Who is waiting for a request: the person (foreground) or housekeeping (background)."""

    FOREGROUND = "foreground"
    BACKGROUND = "background"


class RequestKind(StrEnum):
    """What a request is for, so every request's tokens are counted under its purpose
    (``/cost``, ``-p``'s ``usage_by_purpose``). A new kind of request (a sub-agent's turn,
    web_fetch's summary) is a new value here, set by whoever builds that request."""

    TURN = "turn"
    COMPACTION = "compaction"
    WEB_FETCH = "web_fetch"
    """web_fetch's answer to a prompt over a long page."""
    SUBAGENT = "subagent"
    """A sub-agent's turn (the `task` tool)."""
    WEB_SEARCH = "web_search"
    """web_search's request to a model that searches with its server's own tool."""


class ToolSpec(CachingModel):
    """A tool as the model sees it: name, description and JSON schema of its input."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    input_schema: dict[str, Any]

    @cached_property
    def chars(self) -> int:
        """Characters of the spec as sent (name, description, JSON schema), for estimates."""
        return len(self.name) + len(self.description) + len(json.dumps(self.input_schema))


class ChatRequest(BaseModel):
    """Everything one model call needs.

    ``model`` is the model's name at the provider. Callers that go through a
    `RecoveringProvider` may leave it empty: the recovering provider fills it in from
    its model chain.
    """

    model_config = ConfigDict(frozen=True)

    model: str = ""
    system: str = ""
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int | None = None
    purpose: Purpose = Purpose.FOREGROUND
    kind: RequestKind = RequestKind.TURN
    timeout: float | None = None
    temperature: float | None = None
    server_tools: list[dict[str, Any]] = Field(default_factory=list)
    """Tools the vendor's server runs itself, in its wire shape (Anthropic's
    ``web_search_20250305``). Only the Anthropic adapter sends them; the others refuse such
    a request (`ErrorKind.BAD_REQUEST`), so it never reaches a model that cannot run them."""

    def chars(self) -> int:
        """Characters of what the request sends (system prompt, messages, tool specs)."""
        return (
            len(self.system)
            + sum(message.chars for message in self.messages)
            + sum(tool.chars for tool in self.tools)
        )


class ChatResponse(BaseModel):
    """A finished (or cut-off) assistant message with its stop reason and usage."""

    model_config = ConfigDict(frozen=True)

    message: Message
    stop_reason: StopReason
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    request_id: str | None = None
    rate_limits: RateLimits | None = None
    """The headroom the server reported with this response, if it did."""
    server_blocks: list[dict[str, Any]] = Field(default_factory=list)
    """What the server's own tools produced, as the wire gave it: Anthropic's
    ``server_tool_use`` and ``web_search_tool_result`` blocks, and text blocks that carry
    ``citations``. Not part of `message`: read by the caller that asked for server tools."""


class TextDelta(BaseModel):
    """A piece of streamed answer text."""

    model_config = ConfigDict(frozen=True)

    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolUseDelta(BaseModel):
    """A piece of a streamed tool call: its start (name set) or a chunk of its JSON input."""

    model_config = ConfigDict(frozen=True)

    type: Literal["tool_use_delta"] = "tool_use_delta"
    index: int
    id: str | None = None
    name: str | None = None
    partial_json: str = ""


class StreamReset(BaseModel):
    """Everything streamed so far for this request is void: it is being sent again."""

    model_config = ConfigDict(frozen=True)

    type: Literal["stream_reset"] = "stream_reset"
    reason: str


StreamDelta = TextDelta | ToolUseDelta | StreamReset
DeltaHandler = Callable[[StreamDelta], None]


class Provider(Protocol):
    """Something that answers a `ChatRequest`, streaming deltas as they arrive."""

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Send the request; return the finished message or raise `LlmError`."""
        ...
