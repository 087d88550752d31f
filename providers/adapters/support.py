"""Pieces both provider adapters need that do not depend on a vendor SDK.

The exception table (`ErrorTranslator`) is the adapters' one place that turns what an SDK or
its transport raised into a `LlmError`, like httpx's ``map_httpcore_exceptions``. Both SDKs
are built alike, so each adapter only names its classes (`SdkErrors`) and says where its
error body keeps the server's type and message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import httpx2
import structlog

from providers.adapters.unreachable import unreachable
from providers.classify import classify, retry_after
from providers.errors import ErrorKind, LlmError, MalformedAnswer
from providers.provider import ChatRequest, ChatResponse
from providers.ratelimit import rate_limits_from_headers

__all__ = [
    "ErrorTranslator",
    "SdkErrors",
    "ServerAnswer",
    "StreamIdleTimeout",
    "call_translating_errors",
    "describe",
    "error_from_server",
    "idle_guarded",
    "with_rate_limits",
]


class Classifier(Protocol):
    """An adapter's translation of what its SDK raised (``classify_openai``)."""

    def __call__(self, exc: Exception, *, provider: str, model: str) -> LlmError: ...


T = TypeVar("T")


class StreamIdleTimeout(Exception):
    """No stream event arrived within the idle timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the stream sent nothing for {seconds:g}s")
        self.seconds = seconds


async def idle_guarded(events: AsyncIterable[T], seconds: float) -> AsyncIterator[T]:
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


def refuse_server_tools(request: ChatRequest, *, provider: str) -> None:
    """For adapters whose vendor runs no server tools: a request that needs them fails
    before it is sent, instead of reaching a model that would answer without them.

    Raises:
        LlmError: of kind bad_request, when ``request`` has server tools.
    """
    if request.server_tools:
        kinds = ", ".join(str(tool.get("type")) for tool in request.server_tools)
        raise LlmError(
            ErrorKind.BAD_REQUEST,
            f"{kinds} runs on Anthropic's servers only; {provider}:{request.model} cannot run it",
            provider=provider,
            model=request.model,
        )


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
        error = classify(exc, provider=provider, model=model)
        log.info(
            "llm_error",
            kind=error.kind.value,
            status=error.status,
            error=error.message,
            request_id=error.request_id,
            exc_info=error.kind == ErrorKind.UNKNOWN,
        )
        raise error from exc


@dataclass(frozen=True)
class ServerAnswer:
    """What the server said about a failed call: the evidence `classify` weighs.

    Attributes:
        status: HTTP status (200 for an in-stream error event, None when there was none).
        server_types: The server's own error types and codes, where the body had them.
        message: The server's message.
        headers: The response headers (for the requested wait and the rate limits).
        request_id: The provider's request id.
    """

    status: int | None
    server_types: tuple[str | None, ...]
    message: str
    headers: Mapping[str, str]
    request_id: str | None


@dataclass(frozen=True)
class SdkErrors:
    """One vendor SDK's exception classes, sorted by what they mean.

    Attributes:
        timeout: Classes for a request that timed out.
        connection: Classes for a connection that failed or dropped.
        invalid_response: Classes for an answer the SDK itself could not validate.
        server: The class that carries the server's error answer (status, body).
        read_server: Where ``server``'s body keeps the type, code and message.
        answer_shape: What a valid answer is called, for messages ("chat completion").
    """

    timeout: tuple[type[Exception], ...]
    connection: tuple[type[Exception], ...]
    invalid_response: tuple[type[Exception], ...]
    server: type[Exception]
    read_server: Callable[[Any], ServerAnswer]
    answer_shape: str


@dataclass(frozen=True)
class _Rule:
    """Exceptions of ``types`` are of ``kind``; None: the server's answer decides."""

    types: tuple[type[BaseException], ...]
    kind: ErrorKind | None
    message: Callable[[Exception], str]


class ErrorTranslator:
    """Turns anything an SDK (or its transport) raised into a `LlmError`, by one table.

    The first row whose classes match decides, so subclasses come before their bases (an
    OpenAI timeout is also an ``APIError``). For the server's own error answer the HTTP status
    and the server's type or code weigh first, message keywords last (see `classify`).
    """

    def __init__(self, sdk: SdkErrors) -> None:
        self._sdk = sdk
        malformed = f"the server's answer was not a valid {sdk.answer_shape}"
        self.rules: tuple[_Rule, ...] = (
            _Rule(
                (*sdk.timeout, httpx2.TimeoutException),
                ErrorKind.TIMEOUT,
                lambda _: "the request timed out",
            ),
            _Rule(
                (*sdk.connection, httpx2.TransportError),
                ErrorKind.CONNECTION,
                lambda exc: f"connection failed: {_connection_detail(exc)}",
            ),
            _Rule(sdk.invalid_response, ErrorKind.SERVER, str),
            _Rule((MalformedAnswer,), ErrorKind.SERVER, lambda exc: f"{malformed}: {exc}"),
            _Rule((sdk.server,), None, str),
            _Rule(
                (json.JSONDecodeError, AssertionError, httpx2.DecodingError),
                ErrorKind.SERVER,
                lambda exc: f"the server sent a malformed answer: {describe(exc)}",
            ),
        )

    def __call__(self, exc: Exception, *, provider: str, model: str) -> LlmError:
        """The `LlmError` for ``exc``: the first matching row's, else `ErrorKind.UNKNOWN`."""
        for rule in self.rules:
            if isinstance(exc, rule.types):
                if rule.kind is None:
                    answer = self._sdk.read_server(exc)
                    return error_from_server(answer, provider=provider, model=model)
                return LlmError(rule.kind, rule.message(exc), provider=provider, model=model)
        return LlmError(ErrorKind.UNKNOWN, describe(exc), provider=provider, model=model)


def error_from_server(answer: ServerAnswer, *, provider: str, model: str) -> LlmError:
    """The `LlmError` for a server's error answer, classified by `classify`."""
    kind = classify(status=answer.status, server_types=answer.server_types, message=answer.message)
    return LlmError(
        kind or ErrorKind.UNKNOWN,
        answer.message[:2_000],
        status=answer.status,
        provider=provider,
        model=model,
        retry_after=retry_after(answer.headers, answer.message),
        request_id=answer.request_id,
        server_type=next((str(t) for t in answer.server_types if t), None),
        rate_limits=rate_limits_from_headers(answer.headers),
    )


def _connection_detail(exc: Exception) -> str:
    """ "connection refused (...)" rather than the SDK's "APIConnectionError: Connection error"."""
    found = unreachable(exc)
    if found is None:
        return describe(exc)
    reason, detail = found
    return f"{reason} ({detail})"


def describe(exc: BaseException) -> str:
    """``ClassName: text`` for an exception (its cause's text when it has none of its own)."""
    text = str(exc) or str(exc.__cause__ or "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
