"""Every row of DESIGN §3, acted out by the fake server, raised by the real SDKs, classified.

Each case runs against both adapters, streaming and not (where the failure exists in that mode),
and also checks that the SDK did not retry on its own: the server saw exactly one request.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from providers import ChatRequest, ErrorKind, LlmError, Message
from tests.fakes.llm_server import FakeLlmServer, Fault
from tests.providers.conftest import MakeProvider, Protocol


@dataclass(frozen=True)
class Row:
    id: str
    fault: Fault
    kind: ErrorKind
    modes: tuple[bool, ...] = (False, True)
    retry_after: float | None = None
    protocols: tuple[Protocol, ...] = ("anthropic", "openai")


ROWS = [
    Row(
        "429 rate_limit",
        Fault.status(
            429, "rate_limit_error", code="rate_limit_exceeded", headers={"retry-after": "2"}
        ),
        ErrorKind.RATE_LIMIT,
        retry_after=2.0,
    ),
    Row(
        "429 retry-after-ms",
        Fault.status(429, "rate_limit_error", headers={"retry-after-ms": "1500"}),
        ErrorKind.RATE_LIMIT,
        retry_after=1.5,
    ),
    Row(
        "429 hint in message",
        Fault.status(
            429, "rate_limit_error", message="Rate limit reached. Please try again in 20s."
        ),
        ErrorKind.RATE_LIMIT,
        retry_after=20.0,
    ),
    Row("529 overloaded", Fault.status(529, "overloaded_error"), ErrorKind.OVERLOADED),
    Row("503 unavailable", Fault.status(503), ErrorKind.OVERLOADED),
    Row(
        "in-stream overloaded",
        Fault.stream_error("overloaded_error"),
        ErrorKind.OVERLOADED,
        modes=(True,),
    ),
    Row("500 server", Fault.status(500, "api_error"), ErrorKind.SERVER),
    Row("502 html page", Fault.html(502), ErrorKind.SERVER),
    Row("in-stream api_error", Fault.stream_error("api_error"), ErrorKind.SERVER, modes=(True,)),
    Row("200 not json", Fault.not_json(), ErrorKind.SERVER, modes=(False,)),
    Row("408 timeout", Fault.status(408, "timeout_error"), ErrorKind.TIMEOUT),
    Row("hang past timeout", Fault.hang(5), ErrorKind.TIMEOUT),
    Row("connection reset", Fault.drop(), ErrorKind.CONNECTION),
    Row("stream cut mid-way", Fault.cut_stream(after_events=3), ErrorKind.CONNECTION),
    Row("prompt too long", Fault.overflow(), ErrorKind.CONTEXT_OVERFLOW),
    Row(
        "exceed_context_size_error",
        Fault.status(
            400,
            "exceed_context_size_error",
            message="the request exceeds the available context size",
        ),
        ErrorKind.CONTEXT_OVERFLOW,
    ),
    Row(
        "401 auth",
        Fault.status(401, "authentication_error", code="invalid_api_key"),
        ErrorKind.AUTH,
    ),
    Row("403 permission", Fault.status(403, "permission_error"), ErrorKind.PERMISSION),
    Row(
        "429 insufficient_quota",
        Fault.status(
            429,
            "insufficient_quota",
            code="insufficient_quota",
            message="You exceeded your current quota",
        ),
        ErrorKind.QUOTA,
    ),
    Row("402 billing", Fault.status(402, "billing_error"), ErrorKind.QUOTA),
    Row(
        "404 model",
        Fault.status(404, "not_found_error", code="model_not_found"),
        ErrorKind.NOT_FOUND,
    ),
    Row(
        "400 bad request",
        Fault.status(400, "invalid_request_error", message="tools.0.input_schema: invalid"),
        ErrorKind.BAD_REQUEST,
    ),
    Row("413 too large", Fault.status(413, "request_too_large"), ErrorKind.BAD_REQUEST),
    Row("422 unprocessable", Fault.status(422), ErrorKind.BAD_REQUEST),
    # Anthropic has no refusal error: it stops with stop_reason "refusal" (see test_adapters).
    Row(
        "content filter",
        Fault.status(400, "invalid_request_error", code="content_policy_violation"),
        ErrorKind.REFUSAL,
        protocols=("openai",),
    ),
    Row(
        "in-stream unknown",
        Fault.stream_error("mystery_error", message="???"),
        ErrorKind.UNKNOWN,
        modes=(True,),
    ),
]

CASES = [
    pytest.param(row, protocol, stream, id=f"{row.id}-{protocol}-{'stream' if stream else 'json'}")
    for row in ROWS
    for protocol in row.protocols
    for stream in row.modes
]


@pytest.mark.parametrize(("row", "protocol", "stream"), CASES)
async def test_failure_is_classified(
    row: Row, protocol: Protocol, stream: bool, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(row.fault)
    provider = make_provider(protocol, stream=stream)
    request = ChatRequest(model="model-a", messages=[Message.user("hi")], timeout=0.5)

    with pytest.raises(LlmError) as caught:
        await provider.chat(request)

    error = caught.value
    assert error.kind == row.kind, repr(error)
    assert error.provider == protocol
    assert error.model == "model-a"
    assert error.message
    if row.retry_after is not None:
        assert error.retry_after == pytest.approx(row.retry_after)
    assert len(fake_llm.requests) == 1, "the SDK retried on its own"


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_status_error_keeps_status_type_and_request_id(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.status(529, "overloaded_error", message="Overloaded"))

    with pytest.raises(LlmError) as caught:
        await make_provider(protocol).chat(ChatRequest(model="m", messages=[Message.user("x")]))

    assert caught.value.status == 529
    assert caught.value.server_type == "overloaded_error"
    assert caught.value.message == "Overloaded"
    assert caught.value.request_id == f"req_fake_{protocol}"


async def test_anthropic_in_stream_error_has_status_200(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.stream_error("overloaded_error"))

    with pytest.raises(LlmError) as caught:
        await make_provider("anthropic").chat(ChatRequest(model="m", messages=[Message.user("x")]))

    assert caught.value.status == 200


async def test_openai_in_stream_error_has_no_status(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.stream_error("server_error"))

    with pytest.raises(LlmError) as caught:
        await make_provider("openai").chat(ChatRequest(model="m", messages=[Message.user("x")]))

    assert caught.value.status is None
    assert caught.value.kind == ErrorKind.SERVER


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_non_json_text_body_is_a_server_error(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.not_json(content_type="text/plain"))

    with pytest.raises(LlmError) as caught:
        await make_provider(protocol, stream=False).chat(
            ChatRequest(model="m", messages=[Message.user("x")])
        )

    assert caught.value.kind == ErrorKind.SERVER


@pytest.mark.parametrize(
    ("protocol", "data"),
    [
        ("anthropic", "42"),  # not an object
        ("anthropic", '{"type": "content_block_start"}'),  # no index
        ("anthropic", '{"type": "content_block_start", "index": 0, "content_block": "text"}'),
        (
            "anthropic",
            '{"type": "content_block_start", "index": 0, '
            '"content_block": {"type": "tool_use", "id": 7, "name": null}}',
        ),
        ("openai", "42"),
        ("openai", '{"choices": "x"}'),
        ("openai", '{"choices": [{"index": 0, "delta": {"content": 5}}]}'),
        ("openai", '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7}]}}]}'),
    ],
)
async def test_a_malformed_stream_event_is_a_server_error(
    protocol: Protocol, data: str, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.bad_event(data))

    with pytest.raises(LlmError) as caught:
        await make_provider(protocol).chat(ChatRequest(model="m", messages=[Message.user("x")]))

    assert caught.value.kind == ErrorKind.SERVER
    assert "was not a valid" in caught.value.message


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_a_body_of_the_wrong_shape_is_a_server_error(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.bad_body('{"content": [{"type": "text", "text": 5}], "choices": 1}'))

    with pytest.raises(LlmError) as caught:
        await make_provider(protocol, stream=False).chat(
            ChatRequest(model="m", messages=[Message.user("x")])
        )

    assert caught.value.kind == ErrorKind.SERVER
    assert "not a valid" in caught.value.message
