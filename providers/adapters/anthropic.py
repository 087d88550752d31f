"""Provider adapter for the Anthropic Messages API (streaming, tool use, no SDK retries).

Every failure leaves as `LlmError` (see `classify_anthropic`); cancellation is never wrapped.
Failure modes of the SDK this handles, beside plain HTTP errors:
- an in-stream ``event: error`` is an ``APIStatusError`` with ``status_code == 200``;
- a connection dropped mid-stream raises the transport's own error (``httpx2``), not ``APIError``;
- a 200 body that is not JSON surfaces as ``JSONDecodeError`` / ``AssertionError`` or as text;
- a stream that just ends, without ``message_stop`` or a stop reason, raises nothing: it becomes
  `StopReason.INCOMPLETE`.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import structlog

from providers.adapters.anthropic_mapping import (
    CACHE_BREAKPOINT,
    EventAccumulator,
    anthropic_message,
    response_from_message,
    to_anthropic_messages,
    to_anthropic_tools,
    with_cache_breakpoints,
)
from providers.adapters.sdk_call import (
    DEFAULT_REQUEST_TIMEOUT,
    answer_from_body,
    answer_from_stream,
    sdk_client_options,
)
from providers.adapters.support import (
    ErrorTranslator,
    SdkErrors,
    ServerAnswer,
    call_translating_errors,
)
from providers.errors import LlmError
from providers.profiles import model_profile
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, Purpose, ToolSpec
from providers.wire_cache import WireCache
from providers.wire_json import JsonBody

__all__ = ["AnthropicProvider", "classify_anthropic"]

DEFAULT_MAX_TOKENS = 8_192
MESSAGES_PATH = "/v1/messages"
REQUEST_ID_HEADER = "request-id"

log = structlog.get_logger("providers.adapters.anthropic")


class AnthropicProvider:
    """`Provider` for Anthropic's Messages API, or any server that speaks it.

    Args:
        api_key: The API key (never logged).
        base_url: Server root; None means the SDK default (or ``ANTHROPIC_BASE_URL``).
        headers: Extra headers sent with every request.
        provider_name: Name used in errors and responses.
        stream_idle_timeout: Seconds a stream may stay silent before it counts as timed out.
        request_timeout: Seconds a whole request may take when the request sets none.
        connect_timeout: Seconds to wait for a connection.
        stream: Stream responses (the default) or ask for one JSON body.
        http_client: The HTTP client the SDK sends with (chaos mode passes one whose
            transport injects faults); None: the SDK's own.
    """

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        headers: dict[str, str] | None = None,
        provider_name: str = "anthropic",
        stream_idle_timeout: float = 90.0,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        connect_timeout: float = 10.0,
        stream: bool = True,
        prompt_cache: bool = True,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.provider_name = provider_name
        self._prompt_cache = prompt_cache
        self._idle = stream_idle_timeout
        self._request_timeout = request_timeout
        self._connect = connect_timeout
        self._stream = stream
        self._wire = WireCache(anthropic_message)
        self._json = JsonBody()
        self._wire_tools: tuple[object, list[dict[str, Any]]] = (None, [])
        self._wire_system: tuple[str | None, list[dict[str, Any]]] = (None, [])
        self._client = anthropic.AsyncAnthropic(
            **sdk_client_options(
                api_key=api_key,
                base_url=base_url,
                headers=headers,
                connect_timeout=connect_timeout,
                http_client=http_client,
            )
        )

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Send ``request``; stream deltas to ``on_delta``; raise only `LlmError`."""

        async def call() -> ChatResponse:
            if self._stream:
                return await self._chat_stream(request, on_delta)
            return await self._chat_once(request)

        return await call_translating_errors(
            call,
            deadline=request.timeout or self._request_timeout,
            classify=classify_anthropic,
            provider=self.provider_name,
            model=request.model,
            log=log,
        )

    def _body(self, request: ChatRequest, *, stream: bool) -> bytes:
        """The request as the JSON bytes sent (see `JsonBody`)."""
        profile = model_profile(request.model)
        ceiling = profile.limits.max_output_tokens
        messages = to_anthropic_messages(request.messages, self._wire)
        # A one-off background request (a summary) would pay for a cache write nobody reads.
        foreground = request.purpose is Purpose.FOREGROUND
        cache = self._prompt_cache and profile.prompt_cache and foreground
        fields: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens or min(DEFAULT_MAX_TOKENS, ceiling),
            "stream": stream,
        }
        if request.tools:
            # Tools come first in the cached prefix: a breakpoint on the system prompt covers
            # both; without one, the last tool carries it.
            fields["tools"] = self._tools(request.tools, mark=cache and not request.system)
        if request.server_tools:
            fields["tools"] = [*fields.get("tools", ()), *request.server_tools]
        if request.system:
            fields["system"] = self._system(request.system) if cache else request.system
        if request.temperature is not None:
            fields["temperature"] = request.temperature
        return self._json(fields, with_cache_breakpoints(messages) if cache else messages)

    def _tools(self, tools: list[ToolSpec], *, mark: bool) -> list[dict[str, Any]]:
        """The tools' wire form, the same list while the tool set is (so it is encoded once)."""
        key = (tools, mark)
        if self._wire_tools[0] != key:
            wire = to_anthropic_tools(tools)
            if mark:
                wire[-1] = wire[-1] | {"cache_control": CACHE_BREAKPOINT}
            self._wire_tools = (key, wire)
        return self._wire_tools[1]

    def _system(self, system: str) -> list[dict[str, Any]]:
        """The system prompt marked as the end of the cached prefix, kept like the tools."""
        if self._wire_system[0] != system:
            text = {"type": "text", "text": system, "cache_control": CACHE_BREAKPOINT}
            self._wire_system = (system, [text])
        return self._wire_system[1]

    def _options(self, read: float) -> anthropic.RequestOptions:
        return {"timeout": httpx2.Timeout(read, connect=self._connect)}

    async def _chat_once(self, request: ChatRequest) -> ChatResponse:
        read = request.timeout or self._request_timeout
        raw = await self._client.post(
            MESSAGES_PATH,
            content=self._body(request, stream=False),
            cast_to=httpx2.Response,
            options=self._options(read),
        )
        return answer_from_body(
            raw,
            response_from_message,
            provider=self.provider_name,
            request_id_header=REQUEST_ID_HEADER,
        )

    async def _chat_stream(
        self, request: ChatRequest, on_delta: DeltaHandler | None
    ) -> ChatResponse:
        # Events come as the server's dicts (``object``): building a pydantic model per event
        # only to dump it back to a dict was a tenth of a step's cost.
        stream = await self._client.post(
            MESSAGES_PATH,
            content=self._body(request, stream=True),
            cast_to=object,
            stream=True,
            stream_cls=anthropic.AsyncStream[object],
            options=self._options(self._idle),
        )
        return await answer_from_stream(
            stream,
            EventAccumulator(on_delta),
            idle=self._idle,
            provider=self.provider_name,
            request_id_header=REQUEST_ID_HEADER,
        )


def _server_answer(exc: anthropic.APIStatusError) -> ServerAnswer:
    """Anthropic's error body is ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    body_error = exc.body.get("error") if isinstance(exc.body, dict) else None
    body_type = body_error.get("type") if isinstance(body_error, dict) else None
    message = exc.api_message or (exc.body if isinstance(exc.body, str) else exc.message)
    return ServerAnswer(
        status=exc.status_code,
        server_types=(exc.type or body_type,),
        message=str(message),
        headers=exc.response.headers,
        request_id=exc.request_id,
    )


_ERRORS = ErrorTranslator(
    SdkErrors(
        timeout=(anthropic.APITimeoutError,),
        connection=(anthropic.APIConnectionError,),
        invalid_response=(anthropic.APIResponseValidationError,),
        server=anthropic.APIStatusError,
        read_server=_server_answer,
        answer_shape="Messages response",
    )
)


def classify_anthropic(exc: Exception, *, provider: str = "anthropic", model: str = "") -> LlmError:
    """Translate anything the Anthropic SDK (or its transport) raised into a `LlmError`."""
    return _ERRORS(exc, provider=provider, model=model)
