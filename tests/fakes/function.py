"""A `Provider` whose answer is a function of the request and the delta handler.

For tests that need more than a script of whole responses: a stream cut after some deltas,
a call that blocks until cancelled, answers that depend on ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from providers import ChatRequest, ChatResponse, DeltaHandler

Answer = Callable[[ChatRequest, DeltaHandler | None], Awaitable[ChatResponse]]


class FunctionProvider:
    """Answers each `chat` call with ``await answer(request, on_delta)``; records requests."""

    def __init__(self, answer: Answer) -> None:
        self._answer = answer
        self.requests: list[ChatRequest] = []

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        self.requests.append(request)
        return await self._answer(request, on_delta)
