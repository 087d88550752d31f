"""Both adapters, through the real SDKs, against the fake server: streams, tools, stops."""

from __future__ import annotations

import asyncio
import json

import pytest

from providers import (
    ChatRequest,
    ErrorKind,
    LlmError,
    Message,
    Purpose,
    StopReason,
    StreamDelta,
    TextDelta,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseDelta,
)
from providers.conversation import RAW_ARGUMENTS_KEY
from tests.fakes.llm_server import FakeLlmServer, Fault, Reply
from tests.fakes.vendor_rules import request_problems
from tests.providers.conftest import MakeProvider, Protocol

PROTOCOLS: list[Protocol] = ["anthropic", "openai"]
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)


def request(**options: object) -> ChatRequest:
    return ChatRequest.model_validate(
        {"model": "model-a", "messages": [Message.user("hello")]} | options
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("stream", [True, False])
async def test_text_reply(
    protocol: Protocol, stream: bool, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.text("Hello there, friend.", cache_read_tokens=5))
    deltas: list[StreamDelta] = []

    response = await make_provider(protocol, stream=stream).chat(request(), deltas.append)

    assert response.message == Message.assistant("Hello there, friend.")
    assert response.stop_reason == StopReason.END_TURN
    assert response.usage.input_tokens == 11
    assert response.usage.output_tokens == 7
    assert response.usage.cache_read_tokens == 5
    assert response.provider == protocol
    assert response.request_id == f"req_fake_{protocol}"
    if stream:
        assert len(deltas) >= 2
        assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello there, friend."


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("stream", [True, False])
async def test_tool_call_reply(
    protocol: Protocol, stream: bool, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.tool_call("read_file", {"path": "a.py"}, text="Let me look."))
    deltas: list[StreamDelta] = []

    response = await make_provider(protocol, stream=stream).chat(
        request(tools=[READ_FILE]), deltas.append
    )

    assert response.stop_reason == StopReason.TOOL_USE
    assert response.message.text == "Let me look."
    [call] = response.message.tool_uses
    assert (call.name, call.input) == ("read_file", {"path": "a.py"})
    assert call.id
    if stream:
        tool_deltas = [d for d in deltas if isinstance(d, ToolUseDelta)]
        assert tool_deltas[0].name == "read_file"
        assert tool_deltas[0].id == call.id
        assert json.loads("".join(d.partial_json for d in tool_deltas)) == {"path": "a.py"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_invalid_tool_arguments_are_kept_raw(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.tool_call("read_file", raw_arguments='{"path": "a.py'))

    response = await make_provider(protocol).chat(request(tools=[READ_FILE]))

    assert response.message.tool_uses[0].input == {RAW_ARGUMENTS_KEY: '{"path": "a.py'}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("stop", "ours"),
    [
        ("max_tokens", StopReason.MAX_TOKENS),
        ("refusal", StopReason.REFUSAL),
        ("end_turn", StopReason.END_TURN),
    ],
)
async def test_stop_reasons(
    protocol: Protocol,
    stop: str,
    ours: StopReason,
    fake_llm: FakeLlmServer,
    make_provider: MakeProvider,
) -> None:
    fake_llm.script(Reply.text("cut", stop=stop))  # type: ignore[arg-type]

    response = await make_provider(protocol).chat(request())

    assert response.stop_reason == ours


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("after_events", [0, 1, 3])
async def test_stream_without_a_stop_is_incomplete(
    protocol: Protocol, after_events: int, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.end_early(after_events=after_events))

    response = await make_provider(protocol).chat(request())

    assert response.stop_reason == StopReason.INCOMPLETE


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_silent_stream_times_out(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.stall(seconds=5, after_events=2))

    with pytest.raises(LlmError) as caught:
        await make_provider(protocol, stream_idle_timeout=0.3).chat(request())

    assert caught.value.kind == ErrorKind.TIMEOUT


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_short_pause_is_not_an_idle_timeout(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.stall(seconds=0.2, after_events=2, reply=Reply.text("slow but fine")))

    response = await make_provider(protocol, stream_idle_timeout=5).chat(request())

    assert response.message.text == "slow but fine"
    assert response.stop_reason == StopReason.END_TURN


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_cancellation_is_not_wrapped(
    protocol: Protocol, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Fault.hang(5))
    task = asyncio.create_task(make_provider(protocol).chat(request()))
    while not fake_llm.requests:
        await asyncio.sleep(0.01)

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fault", [Fault.status(500, "api_error"), Fault.status(429)])
async def test_sdk_does_not_retry(
    protocol: Protocol, fault: Fault, fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(fault, Fault.status(500, message="a second request was sent"))

    with pytest.raises(LlmError):
        await make_provider(protocol).chat(request())

    assert len(fake_llm.requests) == 1
    assert fake_llm.remaining == 1


async def test_anthropic_request_on_the_wire(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.text("ok"))

    await make_provider("anthropic", headers={"x-team": "blue"}).chat(
        request(system="be brief", tools=[READ_FILE], max_tokens=123, temperature=0.5)
    )

    [seen] = fake_llm.requests
    assert seen.path == "/v1/messages"
    assert seen.headers["x-team"] == "blue"
    credentials = seen.headers.get("x-api-key", "") + seen.headers.get("authorization", "")
    assert "test-key" in credentials
    assert seen.body["system"] == [
        {"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}
    ]
    assert seen.body["max_tokens"] == 123
    assert seen.body["temperature"] == 0.5
    assert seen.body["stream"] is True
    assert seen.body["tools"][0]["input_schema"] == READ_FILE.input_schema
    assert seen.body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_openai_request_on_the_wire(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.text("ok"))

    await make_provider("openai").chat(request(system="be brief", tools=[READ_FILE], max_tokens=9))

    [seen] = fake_llm.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer test-key"
    assert seen.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert seen.body["stream_options"] == {"include_usage": True}
    assert seen.body["max_tokens"] == 9
    assert seen.body["tools"][0]["function"]["name"] == "read_file"


async def test_openai_server_that_rejects_stream_options(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    rejection = Fault.status(400, "invalid_request_error", message="unknown field stream_options")
    fake_llm.script(rejection, Reply.text("ok", omit_usage=True), Reply.text("again"))
    provider = make_provider("openai")

    first = await provider.chat(request())
    second = await provider.chat(request())

    assert (first.message.text, second.message.text) == ("ok", "again")
    assert "stream_options" not in fake_llm.requests[1].body
    assert "stream_options" not in fake_llm.requests[2].body


async def test_unscripted_request_says_the_script_ran_out(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    with pytest.raises(LlmError) as caught:
        await make_provider("openai").chat(request())

    assert "script ran out" in caught.value.message


async def test_script_per_model(fake_llm: FakeLlmServer, make_provider: MakeProvider) -> None:
    fake_llm.script(Fault.status(529, "overloaded_error"), model="primary")
    fake_llm.script(Reply.text("from the fallback"), model="fallback")
    provider = make_provider("anthropic")

    with pytest.raises(LlmError):
        await provider.chat(request(model="primary"))
    response = await provider.chat(request(model="fallback"))

    assert response.message.text == "from the fallback"
    assert [r.model for r in fake_llm.requests] == ["primary", "fallback"]


def _tool_loop(steps: int) -> list[Message]:
    """A turn of ``steps`` read_file calls, each answered, as the loop sends it."""
    messages = [Message.user("read everything")]
    for n in range(steps):
        call = ToolUseBlock(id=f"toolu_{n}", name="read_file", input={"path": f"f{n}"})
        messages.append(Message(role="assistant", content=[call]))
        messages.append(
            Message(role="user", content=[ToolResultBlock(tool_use_id=call.id, content="x")])
        )
    return messages


async def test_anthropic_requests_mark_the_prompt_cache_where_the_history_ends(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    provider = make_provider("anthropic")
    history = _tool_loop(4)
    fake_llm.script(*[Reply.text("ok")] * 3)

    for end in (3, 5, 9):  # one adapter, its wire forms reused from request to request
        await provider.chat(request(system="be brief", tools=[READ_FILE], messages=history[:end]))

    for seen in fake_llm.requests:
        marked = [
            index
            for index, message in enumerate(seen.body["messages"])
            for block in message["content"]
            if "cache_control" in block
        ]
        last = len(seen.body["messages"]) - 1
        assert marked == [last - 2, last]  # where the previous request ended, and this one
        assert seen.body["system"][0]["cache_control"] == {"type": "ephemeral"}
        assert request_problems("anthropic", seen.body) == []  # at most four breakpoints


async def test_no_cache_breakpoints_when_turned_off_or_for_a_one_off_background_request(
    fake_llm: FakeLlmServer, make_provider: MakeProvider
) -> None:
    fake_llm.script(Reply.text("ok"), Reply.text("summary"))

    await make_provider("anthropic", prompt_cache=False).chat(
        request(system="be brief", tools=[READ_FILE], messages=_tool_loop(2))
    )

    await make_provider("anthropic").chat(  # a summary: read once, not worth a cache write
        request(system="be brief", messages=_tool_loop(2), purpose=Purpose.BACKGROUND)
    )

    for seen in fake_llm.requests:
        assert seen.body["system"] == "be brief"
        assert "cache_control" not in json.dumps(seen.body)
