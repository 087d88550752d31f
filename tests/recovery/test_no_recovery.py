"""``--no-recovery`` (``recovery.enabled: false``): one request, its error as it came."""

from __future__ import annotations

import pytest

from providers import ErrorKind, LlmError, Purpose, StopReason
from providers.testing import ScriptedProvider, text
from recovery import Action, CallState, RecoverySettings, decide
from tests.recovery.support import REQUEST, Recorder, fail, target

OFF = RecoverySettings(enabled=False)


def test_the_policy_sends_at_once_and_raises_every_error() -> None:
    held = CallState(0, 0.0, 0, Purpose.FOREGROUND, True, breaker_open=30.0, held=20.0)
    assert decide(None, held, OFF, jitter=0.0).action is Action.SEND
    after = CallState(1, 0.0, 1, Purpose.FOREGROUND, True)
    for kind in (ErrorKind.OVERLOADED, ErrorKind.RATE_LIMIT, ErrorKind.AUTH):
        assert decide(fail(kind), after, OFF, jitter=0.5).action is Action.RAISE


async def test_a_failing_model_is_neither_retried_nor_left(rec: Recorder) -> None:
    primary = ScriptedProvider([fail(ErrorKind.OVERLOADED, "busy")])
    fallback = ScriptedProvider([])
    provider = rec.provider(
        target("anthropic:a", primary), target("openai:b", fallback), enabled=False
    )
    with pytest.raises(LlmError) as caught:
        await provider.chat(REQUEST)
    assert caught.value.kind is ErrorKind.OVERLOADED
    assert (len(primary.requests), len(fallback.requests)) == (1, 0)
    assert rec.clock.sleeps == []


async def test_a_cut_answer_is_not_asked_again(rec: Recorder) -> None:
    primary = ScriptedProvider([text("cut", stop=StopReason.MAX_TOKENS)])
    provider = rec.provider(target("anthropic:a", primary), enabled=False)
    assert (await provider.chat(REQUEST)).stop_reason is StopReason.MAX_TOKENS
    assert len(primary.requests) == 1
