"""A server's retry-after binds the whole session: later calls wait for it or fail fast."""

from __future__ import annotations

import pytest

from providers import ErrorKind, LlmError
from providers.testing import ScriptedProvider, text
from tests.recovery.support import REQUEST, Recorder, fail, target


async def test_a_new_call_does_not_send_before_a_long_retry_after(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, status=429, retry_after=3600.0), text("ok")])
    recovering = rec.provider(target("anthropic:a", a), max_retry_wait=60)
    with pytest.raises(LlmError):
        await recovering.chat(REQUEST)
    rec.clock.advance(600)
    with pytest.raises(LlmError) as caught:
        await recovering.chat(REQUEST)
    assert len(a.requests) == 1
    assert caught.value.kind is ErrorKind.RATE_LIMIT
    assert "Try again in 50 min" in caught.value.message
    rec.clock.advance(3000)
    assert (await recovering.chat(REQUEST)).message.text == "ok"


async def test_a_new_call_waits_out_a_short_retry_after(rec: Recorder) -> None:
    a = ScriptedProvider([fail(ErrorKind.RATE_LIMIT, retry_after=100.0), text("ok")])
    recovering = rec.provider(target("anthropic:a", a), max_retry_wait=60, rate_limit_floor=0)
    with pytest.raises(LlmError):
        await recovering.chat(REQUEST)
    sent = rec.clock.now()
    rec.clock.advance(70)
    assert (await recovering.chat(REQUEST)).message.text == "ok"
    assert rec.clock.now() == pytest.approx(sent + 100)
