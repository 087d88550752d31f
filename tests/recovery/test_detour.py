"""A fallback that comes back: the primary is tried again after its cool-down, on the virtual
clock; a bad key keeps the fallback for the session."""

from __future__ import annotations

import pytest

from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    Purpose,
    StreamDelta,
    TextDelta,
)
from providers.models import ModelRef
from providers.testing import FunctionProvider, ScriptedProvider, text
from recovery import FallbackActivated, ModelRestored
from recovery.detour import MAX_TRIAL_INTERVAL, Detour
from tests.recovery.support import REQUEST, Recorder, fail, target

OVERLOADS = [fail(ErrorKind.OVERLOADED)] * 3


async def test_after_an_overload_the_primary_comes_back_after_the_cooldown(rec: Recorder) -> None:
    primary = ScriptedProvider([*OVERLOADS, text("primary again")])
    fallback = ScriptedProvider([text("fallback 1"), text("fallback 2")])
    recovering = rec.provider(target("anthropic:a", primary), target("openai:b", fallback))

    assert (await recovering.chat(REQUEST)).message.text == "fallback 1"
    [switch] = rec.of(FallbackActivated)
    assert switch.returns_in == 30
    assert switch.describe().endswith("— anthropic:a is tried again in 30s")
    rec.clock.advance(10)
    assert (await recovering.chat(REQUEST)).message.text == "fallback 2"  # not yet: no trial
    assert len(primary.requests) == 3

    rec.clock.advance(25)
    assert (await recovering.chat(REQUEST)).message.text == "primary again"
    assert recovering.current == ModelRef("anthropic", "a")
    [back] = rec.of(ModelRestored)
    assert (back.model, back.from_model) == ("anthropic:a", "openai:b")
    assert back.describe().startswith("Back on anthropic:a: it answers again")
    assert recovering.stats().detour is None


async def test_a_failed_trial_doubles_the_wait_and_the_step_stays_on_the_fallback(
    rec: Recorder,
) -> None:
    primary = ScriptedProvider([*OVERLOADS, fail(ErrorKind.OVERLOADED), text("back")])
    fallback = ScriptedProvider([text("f1"), text("f2"), text("f3")])
    recovering = rec.provider(target("anthropic:a", primary), target("openai:b", fallback))
    await recovering.chat(REQUEST)

    rec.clock.advance(30)
    assert (await recovering.chat(REQUEST)).message.text == "f2"  # the trial failed: one request
    assert len(primary.requests) == 4
    detour = recovering.stats().detour
    assert detour is not None
    assert detour.next_trial_in == pytest.approx(60)

    rec.clock.advance(59)
    assert (await recovering.chat(REQUEST)).message.text == "f3"
    rec.clock.advance(1)
    assert (await recovering.chat(REQUEST)).message.text == "back"


def test_the_wait_between_trials_stops_growing_at_ten_minutes() -> None:
    detour = Detour.start(0, 0.0, "3 overloads in a row", ErrorKind.OVERLOADED, cooldown=30)
    for _ in range(10):
        detour.trial_failed(0.0, ErrorKind.OVERLOADED)
    assert detour.interval == MAX_TRIAL_INTERVAL


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        (ErrorKind.AUTH, "the API key was refused"),
        (ErrorKind.QUOTA, "the account has no quota left"),
        (ErrorKind.NOT_FOUND, "the model is unknown to the provider"),
    ],
)
async def test_a_bad_key_keeps_the_fallback_for_the_session(
    rec: Recorder, kind: ErrorKind, why: str
) -> None:
    primary = ScriptedProvider([fail(kind)])
    fallback = ScriptedProvider([text("f1"), text("f2")])
    recovering = rec.provider(target("anthropic:a", primary), target("openai:b", fallback))
    await recovering.chat(REQUEST)

    rec.clock.advance(3600)
    assert (await recovering.chat(REQUEST)).message.text == "f2"
    assert len(primary.requests) == 1
    [switch] = rec.of(FallbackActivated)
    assert switch.describe().endswith(f"— for the rest of the session: {why}")
    detour = recovering.stats().detour
    assert detour is not None
    assert (detour.next_trial_in, detour.stays_because) == (None, why)


async def test_background_calls_and_a_chosen_model_bring_no_trial(rec: Recorder) -> None:
    primary = ScriptedProvider([*OVERLOADS])
    fallback = ScriptedProvider([text("f1"), text("summary"), text("f2")])
    recovering = rec.provider(target("anthropic:a", primary), target("openai:b", fallback))
    await recovering.chat(REQUEST)
    rec.clock.advance(31)

    background = REQUEST.model_copy(update={"purpose": Purpose.BACKGROUND})
    assert (await recovering.chat(background)).message.text == "summary"
    recovering.switch_to(ModelRef("openai", "b"))  # the person chose it: it stays
    assert (await recovering.chat(REQUEST)).message.text == "f2"
    assert len(primary.requests) == 3
    assert recovering.stats().detour is None


async def test_a_trial_cut_mid_stream_resets_what_it_showed(rec: Recorder) -> None:
    async def answer(request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        if len(primary.requests) <= 3:
            raise fail(ErrorKind.OVERLOADED)
        if on_delta is not None:
            on_delta(TextDelta(text="half an ans"))
        raise fail(ErrorKind.CONNECTION)

    primary = FunctionProvider(answer)
    fallback = ScriptedProvider([text("f1"), text("f2")])
    recovering = rec.provider(target("anthropic:a", primary), target("openai:b", fallback))
    await recovering.chat(REQUEST)
    rec.clock.advance(30)

    shown: list[StreamDelta] = []
    assert (await recovering.chat(REQUEST, shown.append)).message.text == "f2"
    assert [delta.type for delta in shown] == ["text_delta", "stream_reset", "text_delta"]
    assert len(primary.requests) == 4


async def test_stats_count_the_time_on_each_model(rec: Recorder) -> None:
    primary = ScriptedProvider([text("a1"), *OVERLOADS, text("a2")])
    fallback = ScriptedProvider([text("b1")])
    recovering = rec.provider(
        target("anthropic:a", primary),
        target("openai:b", fallback),
        breaker_cooldown=100,
    )
    await recovering.chat(REQUEST)
    rec.clock.advance(50)
    await recovering.chat(REQUEST)  # falls back (two short backoffs on the way)
    before = dict(recovering.stats().time_on_models)["anthropic:a"]
    rec.clock.advance(100)
    await recovering.chat(REQUEST)
    rec.clock.advance(5)

    stats = recovering.stats()
    times = dict(stats.time_on_models)
    assert list(times) == ["anthropic:a", "openai:b"]
    assert times["openai:b"] == pytest.approx(100)
    assert times["anthropic:a"] == pytest.approx(before + 5)
