"""Fake models for tests, benchmarks and anyone driving the agent without a vendor.

Both fakes are `Provider`s, so whatever takes a provider (the loop, `RecoveringProvider`,
compaction's summariser) takes them unchanged, and both record every request they receive:

- `ScriptedProvider` answers from a list, in order (mini-swe-agent's `DeterministicModel`,
  simonw/llm's `MockModel`). `text` and `tool_call` build its steps.
- `FunctionProvider` answers with a function of the request and the delta handler
  (pydantic-ai's `FunctionModel`): a stream cut after some deltas, a call that blocks until
  cancelled, an answer that depends on ``max_tokens``.

Neither talks to a network or imports an SDK.

Example:
    provider = ScriptedProvider([tool_call("read_file", path="README.md"), text("Done.")])
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from providers.errors import LlmError
from providers.messages import Message, TextBlock, ToolUseBlock, Usage
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, StopReason, TextDelta

__all__ = ["Answer", "FunctionProvider", "ScriptedProvider", "Step", "text", "tool_call"]

Step = ChatResponse | LlmError | Callable[[ChatRequest], ChatResponse]
"""One step of a `ScriptedProvider`'s script: a response, an error to raise, or a function."""

Answer = Callable[[ChatRequest, DeltaHandler | None], Awaitable[ChatResponse]]
"""What a `FunctionProvider` calls for each request: ``await answer(request, on_delta)``."""

# Tool-call ids are unique across every script in the process, as a vendor's would be.
_ids = itertools.count(1)


def text(answer: str, stop: StopReason = StopReason.END_TURN, **usage: int) -> ChatResponse:
    """A response holding one text block.

    Args:
        answer: The assistant's text.
        stop: Why the model stopped.
        **usage: `Usage` fields, e.g. ``input_tokens=120``.
    """
    return ChatResponse(
        message=Message.assistant(answer), stop_reason=stop, usage=Usage(**usage), model="scripted"
    )


def tool_call(name: str, preface: str = "", **arguments: Any) -> ChatResponse:
    """A response that calls one tool (optionally after some text).

    Args:
        name: The tool's name.
        preface: Text the model says before the call; none if empty.
        **arguments: The call's arguments.
    """
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
    or a function of the request returning a response. Running out of steps is a bug in the
    script and raises `AssertionError`.
    """

    def __init__(self, steps: list[Step]) -> None:
        self._steps = list(steps)
        self.requests: list[ChatRequest] = []

    def add(self, *steps: Step) -> None:
        """Append steps to the end of the script."""
        self._steps.extend(steps)

    @property
    def remaining(self) -> int:
        """How many steps are left."""
        return len(self._steps)

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Record the request and play the next step."""
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


class FunctionProvider:
    """Answers each `chat` call with ``await answer(request, on_delta)``; records requests."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self.requests: list[ChatRequest] = []

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Record the request and return what the function answers."""
        self.requests.append(request)
        return await self._answer(request, on_delta)
