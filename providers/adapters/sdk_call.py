"""What both SDK adapters do with one call, whichever vendor's SDK makes it.

Each adapter builds its own request body and posts it through its own SDK; from there the steps
are the same: the SDK client never retries, one JSON answer is read into our response, and a
stream's events are fed to an accumulator under the idle guard. Each step carries the request
id and the rate-limit headroom the answer's headers report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, TypedDict

import httpx2

from providers.adapters.support import idle_guarded, with_rate_limits
from providers.errors import reading
from providers.provider import ChatResponse

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "Accumulator",
    "BodyReader",
    "SdkClientOptions",
    "SdkStream",
    "answer_from_body",
    "answer_from_stream",
    "sdk_client_options",
]

DEFAULT_REQUEST_TIMEOUT = 600.0


class SdkClientOptions(TypedDict):
    """The keywords both vendor SDK clients are built with."""

    api_key: str
    base_url: str | None
    default_headers: dict[str, str] | None
    max_retries: int
    timeout: httpx2.Timeout
    http_client: httpx2.AsyncClient | None


def sdk_client_options(
    *,
    api_key: str,
    base_url: str | None,
    headers: dict[str, str] | None,
    connect_timeout: float,
    http_client: httpx2.AsyncClient | None,
) -> SdkClientOptions:
    """The options for a vendor SDK client: it never retries on its own, since the recovery
    layer above the adapters decides every retry (SDK retries would multiply them)."""
    return SdkClientOptions(
        api_key=api_key,
        base_url=base_url,
        default_headers=headers,
        max_retries=0,
        timeout=httpx2.Timeout(DEFAULT_REQUEST_TIMEOUT, connect=connect_timeout),
        http_client=http_client,
    )


class BodyReader(Protocol):
    """Builds our response from a vendor's one-JSON-body answer."""

    def __call__(
        self, body: dict[str, Any], *, provider: str, request_id: str | None
    ) -> ChatResponse: ...


class Accumulator(Protocol):
    """Builds our response from a vendor's stream events, passing deltas on as they come."""

    def add(self, event: Any) -> None: ...

    def response(self, *, provider: str, request_id: str | None) -> ChatResponse: ...


class SdkStream(Protocol):
    """An SDK's open event stream (its ``AsyncStream``)."""

    response: httpx2.Response

    def __aiter__(self) -> AsyncIterator[Any]: ...

    async def close(self) -> None: ...


def answer_from_body(
    raw: httpx2.Response, read: BodyReader, *, provider: str, request_id_header: str
) -> ChatResponse:
    """The response in ``raw``'s JSON body, with the request id and rate limits its headers
    carry; a body that is not JSON raises with its start attached (see `reading`)."""
    with reading(raw.text[:200]):
        body = raw.json()
    response = read(body, provider=provider, request_id=raw.headers.get(request_id_header))
    return with_rate_limits(response, raw.headers)


async def answer_from_stream(
    stream: SdkStream,
    accumulator: Accumulator,
    *,
    idle: float,
    provider: str,
    request_id_header: str,
) -> ChatResponse:
    """Feed every event of ``stream`` to ``accumulator`` (`StreamIdleTimeout` after ``idle``
    silent seconds; the stream is closed however it ends); the response, with the request id
    and rate limits the stream's headers carry."""
    headers = stream.response.headers
    try:
        async for event in idle_guarded(stream, idle):
            accumulator.add(event)
    finally:
        await stream.close()
    response = accumulator.response(provider=provider, request_id=headers.get(request_id_header))
    return with_rate_limits(response, headers)
