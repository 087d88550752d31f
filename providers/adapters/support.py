"""Pieces both provider adapters need that do not depend on a vendor SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeVar

import structlog

from providers.errors import ErrorKind, LlmError
from providers.provider import ChatResponse
from providers.ratelimit import rate_limits_from_headers

__all__ = ["StreamIdleTimeout", "call_translating_errors", "idle_guarded", "with_rate_limits"]

Classifier = Callable[[Exception], LlmError]

T = TypeVar("T")


class StreamIdleTimeout(Exception):
    """No stream event arrived within the idle timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the stream sent nothing for {seconds:g}s")
        self.seconds = seconds


async def idle_guarded(events: AsyncIterator[T], seconds: float) -> AsyncIterator[T]:
    """Yield from ``events``; raise `StreamIdleTimeout` if the next one takes over ``seconds``.

    Only this guard's own deadline becomes `StreamIdleTimeout`: a cancellation from outside
    passes through unchanged. A stream sends hundreds of events a second, so instead of a
    timer per event one watchdog timer runs, and when it fires it only re-arms itself for
    the deadline of the latest wait unless that wait really is over.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None, "idle_guarded runs inside a task"
    asked_at = loop.time()  # when the wait for the next event began
    waiting = fired = False
    timer: asyncio.TimerHandle | None = None

    def watchdog() -> None:
        nonlocal timer, fired
        now, due = loop.time(), asked_at + seconds
        if waiting and now >= due:
            fired = True
            task.cancel()
        else:  # a later wait: its deadline; between waits: no wait can end before now+seconds
            timer = loop.call_at(due if waiting else now + seconds, watchdog)

    timer = loop.call_at(asked_at + seconds, watchdog)
    iterator = aiter(events)
    try:
        while True:
            asked_at, waiting = loop.time(), True
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if fired and task.uncancel() == 0:
                    raise StreamIdleTimeout(seconds) from None
                raise
            waiting = False
            yield item
    finally:
        if timer is not None:
            timer.cancel()


def with_rate_limits(response: ChatResponse, headers: Mapping[str, str]) -> ChatResponse:
    """``response`` carrying the rate-limit headroom its HTTP headers reported."""
    limits = rate_limits_from_headers(headers)
    return response if limits is None else response.model_copy(update={"rate_limits": limits})


def timeout_error(message: str, *, provider: str, model: str) -> LlmError:
    """A `LlmError` of kind timeout (overall deadline, idle stream, transport timeout)."""
    return LlmError(ErrorKind.TIMEOUT, message, provider=provider, model=model)


async def call_translating_errors(
    call: Callable[[], Awaitable[T]],
    *,
    deadline: float,
    classify: Classifier,
    provider: str,
    model: str,
    log: structlog.typing.FilteringBoundLogger,
) -> T:
    """Run ``call`` within ``deadline`` seconds; anything it raises leaves as a `LlmError`.

    This is the one boundary where vendor exceptions are translated (like httpx's
    ``map_httpcore_exceptions``). Cancellation passes through untouched.
    """
    try:
        async with asyncio.timeout(deadline):
            return await call()
    except LlmError:
        raise
    except StreamIdleTimeout as exc:
        raise timeout_error(str(exc), provider=provider, model=model) from exc
    except TimeoutError as exc:
        message = f"no complete answer within {deadline:g}s"
        raise timeout_error(message, provider=provider, model=model) from exc
    except Exception as exc:
        error = classify(exc)
        log.info(
            "llm_error",
            kind=error.kind.value,
            status=error.status,
            error=error.message,
            request_id=error.request_id,
            exc_info=error.kind == ErrorKind.UNKNOWN,
        )
        raise error from exc
