"""A scripted `Provider` for loop-level tests: it answers from a list, in order."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    LlmError,
    Message,
    StopReason,
    TextBlock,
    TextDelta,
    ToolUseBlock,
    Usage,
)

Step = ChatResponse | LlmError | Callable[[ChatRequest], ChatResponse]

_ids = itertools.count(1)


def text(answer: str, stop: StopReason = StopReason.END_TURN, **usage: int) -> ChatResponse:
    """A response holding one text block."""
    return ChatResponse(
        message=Message.assistant(answer), stop_reason=stop, usage=Usage(**usage), model="scripted"
    )


def tool_call(name: str, preface: str = "", **arguments: Any) -> ChatResponse:
    """A response that calls one tool (optionally after some text)."""
    blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text=preface)] if preface else []
    blocks.append(ToolUseBlock(id=f"toolu_{next(_ids):04d}", name=name, input=arguments))
    return ChatResponse(
        message=Message(role="assistant", content=list(blocks)),
        stop_reason=StopReason.TOOL_USE,
        model="scripted",
    )


class ScriptedProvider:
    """Answers each `chat` call with the next step of its script; records every request.

    A step is a `ChatResponse` (its text is streamed as one delta), an `LlmError` (raised),
    or a function of the request returning a response. Running out of steps is a test bug
    and raises `AssertionError`.
    """

    def __init__(self, steps: list[Step]) -> None:
        self._steps = list(steps)
        self.requests: list[ChatRequest] = []

    def add(self, *steps: Step) -> None:
        self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        return len(self._steps)

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        self.requests.append(request)
        if not self._steps:
            n = len(self.requests)
            raise AssertionError(f"ScriptedProvider has no step left for request #{n}")
        step = self._steps.pop(0)
        if isinstance(step, LlmError):
            raise step
        response = step if isinstance(step, ChatResponse) else step(request)
        if on_delta is not None and response.message.text:
            on_delta(TextDelta(text=response.message.text))
        return response
