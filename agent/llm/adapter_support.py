"""Pieces both provider adapters need that do not depend on a vendor SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

from agent.llm.errors import ErrorKind, LlmError

__all__ = ["StreamIdleTimeout", "idle_guarded"]

T = TypeVar("T")


class StreamIdleTimeout(Exception):
    """No stream event arrived within the idle timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the stream sent nothing for {seconds:g}s")
        self.seconds = seconds


async def idle_guarded(events: AsyncIterator[T], seconds: float) -> AsyncIterator[T]:
    """Yield from ``events``; raise `StreamIdleTimeout` if the next one takes over ``seconds``.

    Only this guard's own deadline becomes `StreamIdleTimeout`: a cancellation from outside
    passes through unchanged.
    """
    iterator = aiter(events)
    while True:
        try:
            async with asyncio.timeout(seconds):
                item = await anext(iterator)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise StreamIdleTimeout(seconds) from None
        yield item


def timeout_error(message: str, *, provider: str, model: str) -> LlmError:
    """A `LlmError` of kind timeout (overall deadline, idle stream, transport timeout)."""
    return LlmError(ErrorKind.TIMEOUT, message, provider=provider, model=model)
