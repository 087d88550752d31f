"""`RequestFailures`: every request a model did not answer is told, with what comes next."""

from __future__ import annotations

import pytest

from providers import ErrorKind, LlmError
from providers.testing import ScriptedProvider, text
from recovery import RecoveringProvider
from recovery.failures import FailedRequest
from tests.recovery.support import REQUEST, Recorder, fail, target


def told(recovering: RecoveringProvider) -> list[FailedRequest]:
    heard: list[FailedRequest] = []
    recovering.failures.subscribe(heard.append)
    return heard


async def test_a_retry_a_fallback_and_the_answer_are_told_in_order(rec: Recorder) -> None:
    overloaded = fail(ErrorKind.OVERLOADED, status=529)
    long_wait = fail(ErrorKind.RATE_LIMIT, status=429, retry_after=600.0)
    a = ScriptedProvider([overloaded, long_wait])
    b = ScriptedProvider([text("from b")])
    recovering = rec.provider(target("anthropic:a", a), target("openai:b", b), max_retry_wait=60)
    heard = told(recovering)

    assert (await recovering.chat(REQUEST)).message.text == "from b"

    assert [(f.model, f.error, f.attempt, f.next) for f in heard] == [
        ("anthropic:a", overloaded, 1, "retry"),
        ("anthropic:a", long_wait, 2, "fallback"),  # straight on: the wait is too long
    ]
    assert heard[0].wait == rec.clock.sleeps[0]  # the backoff it then waited
    assert heard[1].wait == 600.0  # the server's wait


async def test_a_rejected_request_is_told_as_the_end_of_the_call(rec: Recorder) -> None:
    rejected = fail(ErrorKind.BAD_REQUEST, status=400)
    recovering = rec.provider(target("anthropic:a", ScriptedProvider([rejected])))
    heard = told(recovering)

    with pytest.raises(LlmError):
        await recovering.chat(REQUEST)

    assert [(f.error, f.attempt, f.next, f.wait) for f in heard] == [(rejected, 1, "fail", None)]
