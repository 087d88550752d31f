"""`ChaosTransport`: the HTTP transport under an SDK client that acts out `providers.chaos` faults.

Only the HTTP exchange is replaced: the SDK still builds the request, parses the error body
and raises its own exceptions, the adapter still translates them, and recovery still decides.
The error bodies carry both vendors' fields (``error.type`` for Anthropic, ``error.code``
for OpenAI), so one transport serves both adapters; a truncated answer is the real answer
rewritten in its own vendor's format (`chaos_wire`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2

from providers.adapters.chaos_wire import (
    compactable,
    cut_answer_body,
    cut_anthropic_events,
    cut_openai_chunks,
    parse_sse,
    render_sse,
)
from providers.chaos import ChaosPlan, FaultKind

Sleep = Callable[[float], Awaitable[None]]

_ERRORS: dict[FaultKind, tuple[int, str, str, str]] = {
    FaultKind.RATE_LIMIT: (429, "rate_limit_error", "rate_limit_exceeded", "rate limited"),
    FaultKind.RATE_LIMIT_WAIT: (429, "rate_limit_error", "rate_limit_exceeded", "rate limited"),
    FaultKind.OVERLOAD: (529, "overloaded_error", "server_overloaded", "overloaded"),
    FaultKind.OUTAGE: (503, "api_error", "service_unavailable", "service unavailable"),
    FaultKind.OVERFLOW: (
        400,
        "invalid_request_error",
        "context_length_exceeded",
        "prompt is too long: 250000 tokens > 200000 maximum",
    ),
}


class ChaosTransport(httpx2.AsyncBaseTransport):
    """Wraps the real transport; each request meets the fault its plan draws, or goes through.

    Args:
        inner: The transport that really sends.
        plan: The seeded plan shared by every model of the chain.
        model: ``provider:model``, for the record of injected faults.
        primary: This is the first model of the chain (the one an outage takes down).
        clock: Monotonic seconds (the outage's duration is measured on it).
        sleep: Awaited for a stall.
    """

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        plan: ChaosPlan,
        *,
        model: str,
        primary: bool,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep | None = None,
    ) -> None:
        self._inner = inner
        self._plan = plan
        self._model = model
        self._primary = primary
        self._clock = clock
        self._sleep = sleep

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        fault = self._plan.draw(
            self._model, primary=self._primary, now=self._clock(), compactable=_compactable(request)
        )
        if fault is None:
            return await self._inner.handle_async_request(request)
        if fault is FaultKind.RESET:
            raise httpx2.ConnectError("chaos: connection reset by peer", request=request)
        if fault is FaultKind.STALL:
            await self._stall()
            return await self._inner.handle_async_request(request)
        if fault is FaultKind.CUT_STREAM:
            response = await self._inner.handle_async_request(request)
            return httpx2.Response(
                response.status_code,
                headers=response.headers,
                stream=_CutStream(response),
                request=request,
                extensions=response.extensions,
            )
        if fault is FaultKind.TRUNCATE:
            return await _truncated(await self._inner.handle_async_request(request), request)
        return self._error(fault, request)

    async def _stall(self) -> None:
        seconds = self._plan.spec.stall
        if self._sleep is not None:
            await self._sleep(seconds)
            return
        import asyncio

        await asyncio.sleep(seconds)

    def _error(self, fault: FaultKind, request: httpx2.Request) -> httpx2.Response:
        status, error_type, code, message = _ERRORS[fault]
        headers = {"content-type": "application/json", "x-chaos-fault": fault.value}
        if fault is FaultKind.RATE_LIMIT_WAIT:
            headers["retry-after"] = f"{self._plan.spec.retry_after:g}"
        if fault is FaultKind.OVERLOAD and self._plan.requests % 2:
            status = 503  # bursts of both: Anthropic's 529 and the 503 of a proxy in front
        body = {
            "type": "error",
            "error": {"type": error_type, "code": code, "message": f"chaos: {message}"},
        }
        return httpx2.Response(status, headers=headers, content=json.dumps(body), request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _compactable(request: httpx2.Request) -> bool:
    try:
        body = json.loads(request.content or b"{}")
    except (httpx2.RequestNotRead, ValueError):
        return False
    return isinstance(body, dict) and compactable(body)


async def _truncated(response: httpx2.Response, request: httpx2.Request) -> httpx2.Response:
    """The whole of a real answer, rewritten as if it had hit the output limit."""
    if response.status_code != 200:
        return response
    raw = await response.aread()
    await response.aclose()
    if "text/event-stream" in response.headers.get("content-type", ""):
        events = parse_sse(raw)
        if any(name == "message_start" for name, _ in events):
            events = cut_anthropic_events(events)
        else:
            chunks = cut_openai_chunks([data for _, data in events if data != "[DONE]"])
            events = [(None, data) for data in [*chunks, "[DONE]"]]
        content = render_sse(events)
    else:
        content = json.dumps(cut_answer_body(json.loads(raw))).encode()
    headers = [
        (name, value)
        for name, value in response.headers.items()
        if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
    ]
    headers.append(("x-chaos-fault", FaultKind.TRUNCATE.value))
    return httpx2.Response(200, headers=headers, content=content, request=request)


class _CutStream(httpx2.AsyncByteStream):
    """The first chunk of a real answer, then a dropped connection."""

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_raw():
            yield chunk
            break
        await self._response.aclose()
        raise httpx2.RemoteProtocolError("chaos: the stream was cut")

    async def aclose(self) -> None:
        await self._response.aclose()


def chaos_client(
    plan: ChaosPlan,
    *,
    model: str,
    primary: bool,
    timeout: float = 600.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Sleep | None = None,
) -> httpx2.AsyncClient:
    """An SDK-ready HTTP client whose requests meet the plan's faults (the SDK still sets each
    request's own timeout)."""
    transport = ChaosTransport(
        httpx2.AsyncHTTPTransport(), plan, model=model, primary=primary, clock=clock, sleep=sleep
    )
    limits = httpx2.Timeout(timeout, connect=10.0)
    return httpx2.AsyncClient(transport=transport, timeout=limits, follow_redirects=True)
