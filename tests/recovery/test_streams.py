"""Streams, truncation and cancellation through `RecoveringProvider`."""

from __future__ import annotations

import asyncio
import random

import pytest

from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    Message,
    StopReason,
    StreamDelta,
    StreamReset,
    TextDelta,
    Usage,
)
from providers.testing import FunctionProvider, ScriptedProvider, text
from recovery import (
    RecoveringProvider,
    RecoverySettings,
    RetryScheduled,
    StreamRestarted,
    TokensEscalated,
)
from tests.recovery.support import REQUEST, Recorder, fail, target


def cut(answer: str, tokens: int) -> ChatResponse:
    return ChatResponse(
        message=Message.assistant(answer),
        stop_reason=StopReason.MAX_TOKENS,
        usage=Usage(output_tokens=tokens),
    )


async def test_partial_stream_is_reset_once_before_the_retry(rec: Recorder) -> None:
    calls = 0

    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        nonlocal calls
        calls += 1
        assert on_delta is not None
        if calls == 1:
            on_delta(TextDelta(text="Hel"))
            raise fail(ErrorKind.CONNECTION, "stream cut")
        if calls == 2:
            raise fail(ErrorKind.SERVER)  # failed before streaming anything
        on_delta(TextDelta(text="Hello"))
        return text("Hello")

    deltas: list[StreamDelta] = []
    provider = rec.provider(target("anthropic:a", FunctionProvider(answer)))
    response = await provider.chat(REQUEST, deltas.append)
    assert response.message.text == "Hello"
    assert [type(d).__name__ for d in deltas] == ["TextDelta", "StreamReset", "TextDelta"]
    assert isinstance(deltas[1], StreamReset)
    assert "stream cut" in deltas[1].reason
    assert len(rec.of(StreamRestarted)) == 1


async def test_partial_stream_is_reset_before_a_fallback_model_answers(rec: Recorder) -> None:
    async def partial_then_auth(
        request: ChatRequest, on_delta: DeltaHandler | None
    ) -> ChatResponse:
        assert on_delta is not None
        on_delta(TextDelta(text="par"))
        raise fail(ErrorKind.PERMISSION)

    deltas: list[StreamDelta] = []
    b = ScriptedProvider([text("whole")])
    provider = rec.provider(
        target("anthropic:a", FunctionProvider(partial_then_auth)), target("openai:b", b)
    )
    await provider.chat(REQUEST, deltas.append)
    assert [type(d).__name__ for d in deltas] == ["TextDelta", "StreamReset", "TextDelta"]
    assert rec.of(StreamRestarted)[0].model == "openai:b"


async def test_incomplete_response_is_retried(rec: Recorder) -> None:
    broken = ChatResponse(message=Message.assistant("half"), stop_reason=StopReason.INCOMPLETE)
    a = ScriptedProvider([broken, text("whole")])
    response = await rec.provider(target("anthropic:a", a)).chat(REQUEST)
    assert response.message.text == "whole"
    assert [e.kind for e in rec.of(RetryScheduled)] == [ErrorKind.CONNECTION]


async def test_truncated_answer_is_asked_again_with_twice_the_limit(rec: Recorder) -> None:
    a = ScriptedProvider([cut("partial", 100), text("complete")])
    provider = rec.provider(target("anthropic:a", a, ceiling=64_000))
    response = await provider.chat(REQUEST.model_copy(update={"max_tokens": 1000}))
    assert response.message.text == "complete"
    assert [r.max_tokens for r in a.requests] == [1000, 2000]
    [escalated] = rec.of(TokensEscalated)
    assert (escalated.from_tokens, escalated.to_tokens) == (1000, 2000)


async def test_escalation_is_capped_by_the_model_ceiling(rec: Recorder) -> None:
    a = ScriptedProvider([cut("partial", 100), text("complete")])
    provider = rec.provider(target("anthropic:a", a, ceiling=1500))
    await provider.chat(REQUEST.model_copy(update={"max_tokens": 1000}))
    assert [r.max_tokens for r in a.requests] == [1000, 1500]


async def test_no_escalation_at_the_ceiling_or_when_disabled(rec: Recorder) -> None:
    at_ceiling = ScriptedProvider([cut("partial", 100)])
    disabled = ScriptedProvider([cut("partial", 100)])
    full = REQUEST.model_copy(update={"max_tokens": 4096})
    await rec.provider(target("anthropic:a", at_ceiling, ceiling=4096)).chat(full)
    await rec.provider(target("anthropic:a", disabled), escalate_max_tokens=False).chat(full)
    assert len(at_ceiling.requests) == len(disabled.requests) == 1
    assert rec.of(TokensEscalated) == []


async def test_still_truncated_returns_the_more_complete_answer(rec: Recorder) -> None:
    longer_first = ScriptedProvider([cut("a long partial answer", 900), cut("short", 300)])
    longer_second = ScriptedProvider([cut("short", 300), cut("a long partial answer", 900)])
    deltas: list[StreamDelta] = []
    first = await rec.provider(target("anthropic:a", longer_first)).chat(REQUEST, deltas.append)
    second = await rec.provider(target("anthropic:a", longer_second)).chat(REQUEST)
    assert first.message.text == second.message.text == "a long partial answer"
    # The stream ends showing the answer that was returned, not the shorter retry.
    last_reset = max(i for i, d in enumerate(deltas) if isinstance(d, StreamReset))
    shown = "".join(d.text for d in deltas[last_reset:] if isinstance(d, TextDelta))
    assert shown == "a long partial answer"


async def test_error_during_escalation_goes_through_recovery(rec: Recorder) -> None:
    a = ScriptedProvider([cut("partial", 100), fail(ErrorKind.OVERLOADED), text("complete")])
    response = await rec.provider(target("anthropic:a", a)).chat(REQUEST)
    assert response.message.text == "complete"
    assert len(rec.of(RetryScheduled)) == 1


async def test_unrecoverable_escalation_keeps_the_truncated_answer(rec: Recorder) -> None:
    a = ScriptedProvider([cut("partial", 100), fail(ErrorKind.CONTEXT_OVERFLOW)])
    response = await rec.provider(target("anthropic:a", a)).chat(REQUEST)
    assert response.message.text == "partial"
    assert response.stop_reason is StopReason.MAX_TOKENS


async def test_cancellation_during_a_backoff_sleep_propagates_at_once() -> None:
    sent = asyncio.Event()

    async def overloaded(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        sent.set()
        raise fail(ErrorKind.OVERLOADED, retry_after=30.0)

    inner = FunctionProvider(overloaded)
    provider = RecoveringProvider(
        [target("anthropic:a", inner)], settings=RecoverySettings(), rng=random.Random(1)
    )  # the real asyncio.sleep
    task = asyncio.create_task(provider.chat(REQUEST))
    await sent.wait()
    await asyncio.sleep(0.01)  # now inside the 30 s backoff
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)
    assert len(inner.requests) == 1


async def test_cancellation_during_a_request_is_not_retried(rec: Recorder) -> None:
    started = asyncio.Event()

    async def hang(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    inner = FunctionProvider(hang)
    task = asyncio.create_task(rec.provider(target("anthropic:a", inner)).chat(REQUEST))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)
    assert len(inner.requests) == 1
    assert rec.events == []
