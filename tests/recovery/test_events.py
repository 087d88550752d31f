"""Recovery events read well, serialise, and the all-failed error says what each model said."""

from __future__ import annotations

import pytest

from providers import ErrorKind, Event, LlmError
from providers.models import ModelRef
from recovery import (
    BudgetExhausted,
    CircuitClosed,
    CircuitOpened,
    FallbackActivated,
    GaveUp,
    RetryScheduled,
    StreamRestarted,
    TokensEscalated,
)
from recovery.report import Failure, combined_error

EVENTS = [
    RetryScheduled(
        kind=ErrorKind.OVERLOADED,
        attempt=3,
        max_attempts=8,
        delay=1.5,
        retry_at=1001.5,
        model="anthropic:a",
        provider="anthropic",
    ),
    FallbackActivated(from_model="anthropic:a", to_model="openai:b", reason="auth is not retried"),
    TokensEscalated(model="anthropic:a", from_tokens=8192, to_tokens=16384),
    StreamRestarted(model="anthropic:a", reason="connection: stream cut"),
    BudgetExhausted(model="anthropic:a", kind=ErrorKind.SERVER, tokens_left=2),
    CircuitOpened(model="anthropic:a", failures=5, cooldown=30, retry_at=1030),
    CircuitClosed(model="anthropic:a"),
    GaveUp(kind=ErrorKind.SERVER, requests=9, waited=42, message="anthropic:a: [server] boom"),
]


def test_each_event_has_its_own_type_tag() -> None:
    types = [event.type for event in EVENTS]
    assert len(set(types)) == len(types)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.type)
def test_events_round_trip_through_json(event: Event) -> None:
    assert type(event).model_validate(event.model_dump(mode="json")) == event


def test_descriptions_are_short_and_say_what_happens() -> None:
    lines = [event.describe() for event in EVENTS]
    assert lines[0] == "anthropic is overloaded — retrying in 1.5s (attempt 3/8)"
    assert lines[1] == "Switched from anthropic:a to openai:b (auth is not retried)"
    assert lines[2] == "Answer cut at 8192 tokens — asking again with 16384"
    assert lines[5] == (
        "anthropic:a failed 5 times in a row — still retrying this request; "
        "new requests fail at once for 30s unless it answers"
    )
    assert all(len(line) < 120 for line in lines)


def test_an_open_breaker_with_another_model_says_the_call_moves_on() -> None:
    opened = CircuitOpened(
        model="anthropic:a", failures=5, cooldown=30, retry_at=1030, fallback=True
    )
    assert opened.describe() == (
        "anthropic:a failed 5 times in a row — using the next model; "
        "anthropic:a is tried again in 30s"
    )


def test_one_model_failing_is_reported_without_a_list() -> None:
    error = LlmError(ErrorKind.OVERLOADED, "Overloaded", status=529, provider="anthropic")
    combined = combined_error([Failure(ModelRef("anthropic", "a"), "3 overloads in a row", error)])
    assert combined.message == "Overloaded (3 overloads in a row)"
    assert str(combined) == "[overloaded 529] anthropic:a: Overloaded (3 overloads in a row)"
    assert combined.status == 529


def test_several_models_failing_name_each_model_once() -> None:
    down = LlmError(ErrorKind.CONNECTION, "refused", provider="llamacpp", model="default")
    failures = [
        Failure(ModelRef("llamacpp", "default"), "still failing after 9 attempts", down),
        Failure(ModelRef("openai", "b"), "skipped"),
    ]
    text = str(combined_error(failures))
    assert text == (
        "[connection] every model failed: llamacpp:default: [connection] refused "
        "(still failing after 9 attempts); openai:b: skipped"
    )


def test_soonest_retry_time_is_reported() -> None:
    failures = [
        Failure(ModelRef("anthropic", "a"), "skipped", None, retry_after=7200),
        Failure(ModelRef("openai", "b"), "skipped", None, retry_after=45),
    ]
    combined = combined_error(failures)
    assert combined.retry_after == 45
    assert combined.message.endswith("Try again in 45s.")
    assert combined.kind is ErrorKind.UNKNOWN  # no model was tried, so nothing better to say
