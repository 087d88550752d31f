"""`RecoveringProvider` retrying, failing over and budgeting, on the virtual clock."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from providers import ChatRequest, ChatResponse, DeltaHandler, ErrorKind, LlmError, Purpose
from providers.models import ModelRef
from providers.testing import FunctionProvider, ScriptedProvider, text
from recovery import (
    BudgetExhausted,
    CircuitClosed,
    CircuitOpened,
    FallbackActivated,
    GaveUp,
    RecoverySettings,
    RetryScheduled,
)
from tests.recovery.support import REQUEST, Recorder, fail, target


def always(error: LlmError) -> FunctionProvider:
    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        raise error

    return FunctionProvider(answer)


async def test_fills_in_the_model_and_caps_max_tokens(rec: Recorder) -> None:
    a = ScriptedProvider([text("ok"), text("ok")])
    recovering = rec.provider(target("anthropic:small", a, ceiling=4096), default_max_tokens=8192)
    await recovering.chat(REQUEST)
    await recovering.chat(REQUEST.model_copy(update={"model": "other", "max_tokens": 1000}))
    assert [(r.model, r.max_tokens) for r in a.requests] == [("small", 4096), ("small", 1000)]


async def test_rate_limit_waits_exactly_what_the_server_asked(rec: Recorder) -> None:
    sent_at: list[float] = []

    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        sent_at.append(rec.clock.now())
        if len(sent_at) == 1:
            raise fail(ErrorKind.RATE_LIMIT, retry_after=4.0, request_id="req_1")
        return text("ok")

    start = rec.clock.now()
    response = await rec.provider(target("anthropic:m", FunctionProvider(answer))).chat(REQUEST)
    assert response.message.text == "ok"
    assert rec.clock.sleeps == [4.0]
    assert sent_at[1] - sent_at[0] >= 4.0
    [retry] = rec.of(RetryScheduled)
    assert retry.retry_at == start + 4.0
    assert retry.request_id == "req_1"
    assert retry.describe() == "Rate limited by anthropic — retrying in 4s (attempt 2/40)"


async def test_long_server_wait_falls_back_without_sleeping(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, retry_after=600.0)])
    b = ScriptedProvider([text("from b")])
    recovering = rec.provider(target("anthropic:a", a), target("openai:b", b), max_retry_wait=60)
    response = await recovering.chat(REQUEST)
    assert response.message.text == "from b"
    assert rec.clock.sleeps == []
    [switch] = rec.of(FallbackActivated)
    assert (switch.from_model, switch.to_model) == ("anthropic:a", "openai:b")


async def test_long_server_wait_with_no_fallback_fails_fast_saying_when(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, "slow down", status=429, retry_after=600.0)])
    with pytest.raises(LlmError) as caught:
        await rec.provider(target("anthropic:a", a), max_retry_wait=60).chat(REQUEST)
    assert caught.value.kind is ErrorKind.RATE_LIMIT
    assert caught.value.retry_after == 600.0
    assert "Try again in 10 min" in caught.value.message
    assert rec.clock.sleeps == []


async def test_auth_failure_sends_one_request_then_falls_back_for_good(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.AUTH, "invalid x-api-key", status=401)])
    b = ScriptedProvider([text("one"), text("two")])
    recovering = rec.provider(target("anthropic:a", a), target("openai:b", b))
    assert (await recovering.chat(REQUEST)).message.text == "one"
    assert (await recovering.chat(REQUEST)).message.text == "two"
    assert len(a.requests) == 1
    assert recovering.current == ModelRef("openai", "b")
    assert len(rec.of(FallbackActivated)) == 1
    assert rec.clock.sleeps == []


async def test_quota_is_not_retried(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.QUOTA, "insufficient_quota", status=429)])
    with pytest.raises(LlmError) as caught:
        await rec.provider(target("openai:a", a)).chat(REQUEST)
    assert caught.value.kind is ErrorKind.QUOTA
    assert len(a.requests) == 1
    assert rec.of(RetryScheduled) == []


@pytest.mark.parametrize(
    "kind", [ErrorKind.CONTEXT_OVERFLOW, ErrorKind.BAD_REQUEST, ErrorKind.REFUSAL]
)
async def test_request_errors_are_raised_as_they_are(rec: Recorder, kind: ErrorKind) -> None:
    original = fail(kind, "prompt is too long")
    a = ScriptedProvider([original])
    b = ScriptedProvider([])  # any request to it would fail the test
    with pytest.raises(LlmError) as caught:
        await rec.provider(target("anthropic:a", a), target("openai:b", b)).chat(REQUEST)
    assert caught.value is original
    assert rec.events == []


async def test_consecutive_overloads_switch_to_the_next_model(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.OVERLOADED)] * 3)
    b = ScriptedProvider([text("b")])
    recovering = rec.provider(target("anthropic:a", a), target("openai:b", b))
    assert (await recovering.chat(REQUEST)).message.text == "b"
    assert len(a.requests) == 3
    assert len(rec.clock.sleeps) == 2
    assert rec.of(FallbackActivated)[0].reason == "3 overloads in a row"


async def test_background_gives_up_sooner_than_foreground(rec: Recorder) -> None:
    fg = always(fail(ErrorKind.OVERLOADED))
    bg = always(fail(ErrorKind.OVERLOADED))
    settings = {
        "breaker_threshold": 100,
        "background_overload_fallback_after": 2,
        "max_attempts": 8,
    }
    with pytest.raises(LlmError):
        await rec.provider(target("anthropic:a", fg), **settings).chat(REQUEST)
    background = REQUEST.model_copy(update={"purpose": Purpose.BACKGROUND})
    with pytest.raises(LlmError):
        await rec.provider(target("anthropic:a", bg), **settings).chat(background)
    assert len(fg.requests) == 8
    assert len(bg.requests) == 2


async def test_every_model_failing_gives_one_error_listing_each(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.AUTH, "invalid x-api-key", status=401)])
    b = ScriptedProvider([fail(ErrorKind.NOT_FOUND, "model: gpt-9", status=404, provider="openai")])
    with pytest.raises(LlmError) as caught:
        await rec.provider(target("anthropic:a", a), target("openai:b", b)).chat(REQUEST)
    error = caught.value
    assert error.kind is ErrorKind.AUTH  # the first model's problem is the one to fix
    assert "anthropic:a: [auth 401] invalid x-api-key" in error.message
    assert "openai:b: [not_found 404] model: gpt-9" in error.message
    [gave_up] = rec.of(GaveUp)
    assert gave_up.requests == 2


async def test_hard_outage_ends_in_bounded_requests_and_time(rec: Recorder) -> None:
    a = always(fail(ErrorKind.SERVER, "internal error", status=500))
    b = always(fail(ErrorKind.SERVER, "internal error", status=500))
    recovering = rec.provider(target("anthropic:a", a), target("openai:b", b))
    start = rec.clock.now()
    with pytest.raises(LlmError) as caught:
        await recovering.chat(REQUEST)
    assert "every model failed" in caught.value.message
    # The last model left keeps being asked until the budget or the time is used up.
    defaults = RecoverySettings()
    retries = defaults.budget_capacity / defaults.retry_cost
    assert len(a.requests) + len(b.requests) <= 2 + retries
    assert len(a.requests) == defaults.breaker_threshold
    assert rec.clock.now() - start <= defaults.max_total_wait
    # Both breakers are open (a's cool-down may have passed while b was being probed): the
    # next call sends one trial at most and says when to try again.
    sent = len(a.requests) + len(b.requests)
    with pytest.raises(LlmError) as again:
        await recovering.chat(REQUEST)
    assert len(a.requests) + len(b.requests) <= sent + 1
    assert "Try again in" in again.value.message
    assert {e.model for e in rec.of(CircuitOpened)} == {"anthropic:a", "openai:b"}


async def test_one_model_is_probed_through_an_outage_and_answers_soon_after(
    rec: Recorder,
) -> None:
    sent_at: list[float] = []

    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        sent_at.append(rec.clock.now() - start)
        if rec.clock.now() - start < 60:
            raise fail(ErrorKind.SERVER, "internal error", status=500)
        return text("back")

    start = rec.clock.now()

    recovering = rec.provider(target("anthropic:a", FunctionProvider(answer)))
    assert (await recovering.chat(REQUEST)).message.text == "back"
    defaults = RecoverySettings()
    assert len(sent_at) > defaults.breaker_threshold  # the open breaker did not end the call
    assert sent_at[-1] - 60 < defaults.probe_backoff
    assert [e.model for e in rec.of(CircuitClosed)] == ["anthropic:a"]


async def test_budget_bounds_retries_across_many_calls(rec: Recorder) -> None:
    a = always(fail(ErrorKind.OVERLOADED))
    recovering = rec.provider(
        target("anthropic:a", a), budget_capacity=10, retry_cost=5, breaker_threshold=1000
    )
    for _ in range(20):
        with pytest.raises(LlmError):
            await recovering.chat(REQUEST)
    assert len(a.requests) == 20 + 2  # one request per call, plus the two retries paid for
    assert len(rec.of(BudgetExhausted)) == 20
    assert recovering.stats().budget_tokens == 0


async def test_unknown_errors_count_double(rec: Recorder) -> None:
    a = always(fail(ErrorKind.UNKNOWN))
    recovering = rec.provider(target("anthropic:a", a), budget_capacity=10, retry_cost=5)
    with pytest.raises(LlmError):
        await recovering.chat(REQUEST)
    assert len(a.requests) == 2


async def test_open_breaker_skips_its_model_until_the_cooldown(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.SERVER)] * 3 + [text("a is back")])
    b = ScriptedProvider([text("b1"), text("b2")])
    recovering = rec.provider(
        target("anthropic:a", a), target("openai:b", b), breaker_threshold=3, breaker_cooldown=60
    )
    assert (await recovering.chat(REQUEST)).message.text == "b1"
    assert len(a.requests) == 3
    recovering.switch_to(ModelRef("anthropic", "a"))
    assert (await recovering.chat(REQUEST)).message.text == "b2"
    assert len(a.requests) == 3  # skipped while open
    rec.clock.advance(60)
    recovering.switch_to(ModelRef("anthropic", "a"))
    assert (await recovering.chat(REQUEST)).message.text == "a is back"
    assert [e.model for e in rec.of(CircuitClosed)] == ["anthropic:a"]


async def test_duplicate_models_in_the_chain_are_tried_once(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.AUTH)])
    recovering = rec.provider(target("anthropic:a", a), target("anthropic:a", a))
    assert len(recovering.chain) == 1
    with pytest.raises(LlmError):
        await recovering.chat(REQUEST)
    assert len(a.requests) == 1


async def test_switch_to_an_unknown_ref_says_what_is_known(rec: Recorder) -> None:
    recovering = rec.provider(target("anthropic:a", ScriptedProvider([])))
    with pytest.raises(ValueError, match="anthropic:a"):
        recovering.switch_to(ModelRef("openai", "x"))
    extra = target("openai:x", ScriptedProvider([text("x")]))
    recovering.switch_to(extra)
    assert recovering.current == ModelRef("openai", "x")
    assert (await recovering.chat(REQUEST)).message.text == "x"


async def test_stats_and_logs_follow_the_events(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.SERVER, request_id="req_9"), text("ok")])
    recovering = rec.provider(target("anthropic:a", a))
    with capture_logs() as logs:
        await recovering.chat(REQUEST)
    stats = recovering.stats()
    assert (stats.requests, stats.retries, stats.fallbacks) == (2, 1, 0)
    assert stats.waited == rec.clock.total_slept
    [entry] = [log for log in logs if log["event"] == "retry_scheduled"]
    assert entry["request_id"] == "req_9"
