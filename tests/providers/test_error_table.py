"""The adapters' one exception table: the same exception means the same kind for both SDKs.

Real exceptions of the real SDKs and transport, built by hand; the fake-server tests in
test_classification_table.py cover how they arise.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import anthropic
import httpx2
import openai
import pytest

from providers.adapters.anthropic import classify_anthropic
from providers.adapters.openai import classify_openai
from providers.adapters.support import ServerAnswer, describe, error_from_server
from providers.errors import ErrorKind, LlmError, MalformedAnswer

Classifier = Callable[..., LlmError]
REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/x")


def _status_response(status: int, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers, request=REQUEST)


SHARED: list[tuple[str, Exception, ErrorKind, str]] = [
    (
        "transport timeout",
        httpx2.ReadTimeout("slow", request=REQUEST),
        ErrorKind.TIMEOUT,
        "timed out",
    ),
    (
        "connect error",
        httpx2.ConnectError("refused"),
        ErrorKind.CONNECTION,
        "ConnectError: refused",
    ),
    ("peer closed", httpx2.RemoteProtocolError("peer closed"), ErrorKind.CONNECTION, "peer closed"),
    ("malformed answer", MalformedAnswer("42 (TypeError)"), ErrorKind.SERVER, "not a valid"),
    (
        "not json",
        json.JSONDecodeError("Expecting value", "<html>", 0),
        ErrorKind.SERVER,
        "malformed",
    ),
    ("assertion", AssertionError("bad"), ErrorKind.SERVER, "malformed answer"),
    ("decoding", httpx2.DecodingError("gzip"), ErrorKind.SERVER, "malformed answer"),
    ("anything else", RuntimeError("boom"), ErrorKind.UNKNOWN, "RuntimeError: boom"),
]


@pytest.mark.parametrize(
    "classify", [classify_anthropic, classify_openai], ids=["anthropic", "openai"]
)
@pytest.mark.parametrize(
    ("exc", "kind", "words"), [row[1:] for row in SHARED], ids=[row[0] for row in SHARED]
)
def test_both_adapters_share_the_exception_rows(
    classify: Classifier, exc: Exception, kind: ErrorKind, words: str
) -> None:
    error = classify(exc, model="m")
    assert (error.kind, error.model, error.status) == (kind, "m", None)
    assert words in error.message


@pytest.mark.parametrize(
    ("classify", "exc", "kind"),
    [
        (classify_anthropic, anthropic.APITimeoutError(REQUEST), ErrorKind.TIMEOUT),
        (classify_openai, openai.APITimeoutError(REQUEST), ErrorKind.TIMEOUT),
        (classify_anthropic, anthropic.APIConnectionError(request=REQUEST), ErrorKind.CONNECTION),
        (classify_openai, openai.APIConnectionError(request=REQUEST), ErrorKind.CONNECTION),
    ],
    ids=["anthropic-timeout", "openai-timeout", "anthropic-connection", "openai-connection"],
)
def test_sdk_subclasses_come_before_their_bases(
    classify: Classifier, exc: Exception, kind: ErrorKind
) -> None:
    # An OpenAI timeout is also an APIError: the server-answer row must not catch it first.
    assert classify(exc).kind == kind


@pytest.mark.parametrize(
    ("classify", "exc"),
    [
        (
            classify_anthropic,
            anthropic.RateLimitError(
                "rate limited",
                response=_status_response(429, {"retry-after": "4", "request-id": "req_1"}),
                body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
            ),
        ),
        (
            classify_openai,
            openai.RateLimitError(
                "rate limited",
                response=_status_response(429, {"retry-after": "4", "x-request-id": "req_1"}),
                body={"error": {"type": "rate_limit_error", "message": "slow"}},
            ),
        ),
    ],
    ids=["anthropic", "openai"],
)
def test_a_server_answer_keeps_its_evidence(classify: Classifier, exc: Exception) -> None:
    error = classify(exc)
    assert error.kind == ErrorKind.RATE_LIMIT
    assert (error.status, error.server_type, error.message) == (429, "rate_limit_error", "slow")
    assert (error.retry_after, error.request_id) == (4.0, "req_1")


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (ServerAnswer(429, ("insufficient_quota",), "quota", {}, None), ErrorKind.QUOTA),
        (ServerAnswer(503, ("api_error",), "", {}, None), ErrorKind.OVERLOADED),
        (ServerAnswer(None, (None,), "the engine is overloaded", {}, None), ErrorKind.OVERLOADED),
        (ServerAnswer(None, ("mystery",), "???", {}, None), ErrorKind.UNKNOWN),
    ],
)
def test_error_from_server_weighs_type_then_status_then_words(
    answer: ServerAnswer, kind: ErrorKind
) -> None:
    assert error_from_server(answer, provider="p", model="m").kind == kind


def test_describe_falls_back_to_the_cause() -> None:
    exc = httpx2.ReadError("")
    exc.__cause__ = OSError("reset by peer")
    assert describe(exc) == "ReadError: reset by peer"
