"""Provider adapter for OpenAI Chat Completions and OpenAI-compatible servers.

Serves api.openai.com and any compatible ``base_url`` (Ollama, vLLM, llama.cpp): it tolerates
missing usage, empty ``choices`` and tool-call arguments in one chunk (see `openai_stream`), and
if a server rejects ``stream_options`` it asks again without and stops sending it.
Every failure leaves as `LlmError` (see `classify_openai`); cancellation is never wrapped.
An in-stream ``data: {"error": ...}`` is a bare ``APIError`` with no status: classified by its
body's type/code.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import structlog

from providers.adapters.openai_mapping import openai_wire, to_openai_messages, to_openai_tools
from providers.adapters.openai_stream import ChunkAccumulator, response_from_completion
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
    refuse_server_tools,
)
from providers.errors import LlmError
from providers.provider import ChatRequest, ChatResponse, DeltaHandler, ToolSpec
from providers.wire_cache import WireCache
from providers.wire_json import JsonBody

__all__ = ["OpenAIProvider", "classify_openai"]

CHAT_PATH = "/chat/completions"
REQUEST_ID_HEADER = "x-request-id"
INCLUDE_USAGE = {"include_usage": True}

log = structlog.get_logger("providers.adapters.openai")


class OpenAIProvider:
    """`Provider` for OpenAI's Chat Completions API or a server compatible with it.

    Args:
        api_key: The API key (never logged); compatible servers often accept any text.
        base_url: API root including ``/v1``; None means the SDK default (or ``OPENAI_BASE_URL``).
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
        provider_name: str = "openai",
        stream_idle_timeout: float = 90.0,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        connect_timeout: float = 10.0,
        stream: bool = True,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.provider_name = provider_name
        self._idle = stream_idle_timeout
        self._request_timeout = request_timeout
        self._connect = connect_timeout
        self._stream = stream
        self._include_usage = True
        self._wire = WireCache(openai_wire)
        self._json = JsonBody()
        self._wire_tools: tuple[list[ToolSpec] | None, list[dict[str, Any]]] = (None, [])
        self._client = openai.AsyncOpenAI(
            **sdk_client_options(
                api_key=api_key,
                base_url=base_url,
                headers=headers,
                connect_timeout=connect_timeout,
                http_client=http_client,
            )
        )
        # The official API wants max_completion_tokens (reasoning models reject max_tokens);
        # compatible servers know max_tokens.
        official = "api.openai.com" in str(self._client.base_url)
        self._max_tokens_field = "max_completion_tokens" if official else "max_tokens"

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Send ``request``; stream deltas to ``on_delta``; raise only `LlmError`."""
        refuse_server_tools(request, provider=self.provider_name)

        async def call() -> ChatResponse:
            if self._stream:
                return await self._chat_stream(request, on_delta)
            return await self._chat_once(request)

        return await call_translating_errors(
            call,
            deadline=request.timeout or self._request_timeout,
            classify=classify_openai,
            provider=self.provider_name,
            model=request.model,
            log=log,
        )

    def _body(self, request: ChatRequest, *, stream: bool) -> bytes:
        """The request as the JSON bytes sent (see `JsonBody`)."""
        fields: dict[str, Any] = {"model": request.model}
        if request.tools:
            fields["tools"] = self._tools(request.tools)
        if request.max_tokens is not None:
            fields[self._max_tokens_field] = request.max_tokens
        if request.temperature is not None:
            fields["temperature"] = request.temperature
        if stream:
            fields["stream"] = True
            if self._include_usage:
                fields["stream_options"] = INCLUDE_USAGE
        messages = to_openai_messages(request.system, request.messages, self._wire)
        return self._json(fields, messages)

    def _tools(self, tools: list[ToolSpec]) -> list[dict[str, Any]]:
        """The tools' wire form, the same list while the tool set is (so it is encoded once)."""
        if self._wire_tools[0] != tools:
            self._wire_tools = (tools, to_openai_tools(tools))
        return self._wire_tools[1]

    def _options(self, read: float) -> openai.RequestOptions:
        timeout = httpx2.Timeout(read, connect=self._connect)
        return {"timeout": timeout, "security": {"bearer_auth": True}}

    async def _chat_once(self, request: ChatRequest) -> ChatResponse:
        read = request.timeout or self._request_timeout
        raw = await self._client.post(
            CHAT_PATH,
            content=self._body(request, stream=False),
            cast_to=httpx2.Response,
            options=self._options(read),
        )
        return answer_from_body(
            raw,
            response_from_completion,
            provider=self.provider_name,
            request_id_header=REQUEST_ID_HEADER,
        )

    async def _open_stream(self, request: ChatRequest) -> Any:
        async def post() -> Any:
            return await self._client.post(
                CHAT_PATH,
                content=self._body(request, stream=True),
                cast_to=object,
                stream=True,
                stream_cls=openai.AsyncStream[object],
                options=self._options(self._idle),
            )

        if not self._include_usage:
            return await post()
        try:
            return await post()
        except openai.BadRequestError as exc:
            if "stream_options" not in str(exc):
                raise
            log.info("stream_options_rejected", provider=self.provider_name)
            self._include_usage = False
            return await post()

    async def _chat_stream(
        self, request: ChatRequest, on_delta: DeltaHandler | None
    ) -> ChatResponse:
        # Chunks come as the server's dicts (``object``), not as pydantic models dumped back.
        return await answer_from_stream(
            await self._open_stream(request),
            ChunkAccumulator(on_delta),
            idle=self._idle,
            provider=self.provider_name,
            request_id_header=REQUEST_ID_HEADER,
        )


def _server_answer(exc: openai.APIError) -> ServerAnswer:
    """A status error's body is ``{"error": {...}}``; an in-stream error's is the inner dict."""
    status_error = exc if isinstance(exc, openai.APIStatusError) else None
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    nested = body.get("error")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else body
    message = inner.get("message") or (exc.body if isinstance(exc.body, str) else exc.message)
    return ServerAnswer(
        status=status_error.status_code if status_error else None,
        server_types=(exc.code, exc.type, inner.get("code"), inner.get("type")),
        message=str(message),
        headers=status_error.response.headers if status_error else {},
        request_id=status_error.request_id if status_error else None,
    )


_ERRORS = ErrorTranslator(
    SdkErrors(
        timeout=(openai.APITimeoutError,),
        connection=(openai.APIConnectionError,),
        invalid_response=(openai.APIResponseValidationError,),
        server=openai.APIError,
        read_server=_server_answer,
        answer_shape="chat completion",
    )
)


def classify_openai(exc: Exception, *, provider: str = "openai", model: str = "") -> LlmError:
    """Translate anything the OpenAI SDK (or its transport) raised into a `LlmError`."""
    return _ERRORS(exc, provider=provider, model=model)
