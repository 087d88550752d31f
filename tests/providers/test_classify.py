"""Pure classification helpers: evidence order, overflow keywords, server-directed waits."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from providers.classify import (
    classify,
    is_context_overflow,
    retry_after,
    retry_after_from_headers,
    retry_after_from_message,
)
from providers.errors import ErrorKind

NOW = 1_700_000_000.0


def test_retry_after_ms_wins_over_seconds() -> None:
    headers = {"Retry-After-Ms": "1500", "retry-after": "9"}
    assert retry_after_from_headers(headers) == 1.5


def test_retry_after_seconds() -> None:
    assert retry_after_from_headers({"retry-after": "20"}) == 20.0


def test_retry_after_http_date_is_relative_to_now() -> None:
    when = format_datetime(datetime.fromtimestamp(NOW + 30, tz=UTC), usegmt=True)
    assert retry_after_from_headers({"retry-after": when}, now=lambda: NOW) == 30.0


def test_retry_after_in_the_past_is_zero() -> None:
    when = format_datetime(datetime.fromtimestamp(NOW - 30, tz=UTC), usegmt=True)
    assert retry_after_from_headers({"retry-after": when}, now=lambda: NOW) == 0.0


@pytest.mark.parametrize("value", ["soon", "", "1e"])
def test_unparseable_retry_after_is_none(value: str) -> None:
    assert retry_after_from_headers({"retry-after": value}) is None


def test_no_header_is_none() -> None:
    assert retry_after_from_headers({}) is None


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Rate limit reached for gpt-4.1. Please try again in 20s.", 20.0),
        ("Resource exhausted. Please retry in 1.5s.", 1.5),
        ("Please try again in 250ms.", 0.25),
        ("try again in 2 minutes", 120.0),
        ("retry after 7 seconds", 7.0),
        ("no hint here", None),
    ],
)
def test_retry_after_from_message(message: str, seconds: float | None) -> None:
    assert retry_after_from_message(message) == seconds


def test_header_beats_message_hint() -> None:
    assert retry_after({"retry-after": "3"}, "try again in 20s") == 3.0
    assert retry_after({}, "try again in 20s") == 20.0


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 210000 tokens > 200000 maximum",
        "Error code: context_length_exceeded",
        "exceed_context_size_error: the request exceeds the available context size",
        "This model's maximum context length is 8192 tokens",
    ],
)
def test_overflow_keywords(text: str) -> None:
    assert is_context_overflow(text)


def test_unrelated_text_is_not_overflow() -> None:
    assert not is_context_overflow("invalid tool schema")


@pytest.mark.parametrize(
    ("status", "types", "message", "kind"),
    [
        (429, ("insufficient_quota",), "quota", ErrorKind.QUOTA),
        (429, ("rate_limit_error",), "", ErrorKind.RATE_LIMIT),
        (200, ("overloaded_error",), "", ErrorKind.OVERLOADED),
        (400, ("invalid_request_error",), "prompt is too long", ErrorKind.CONTEXT_OVERFLOW),
        (400, ("invalid_request_error",), "bad schema", ErrorKind.BAD_REQUEST),
        (404, ("invalid_request_error",), "no such model", ErrorKind.NOT_FOUND),
        (413, (None,), "request too large", ErrorKind.BAD_REQUEST),
        (503, (), "", ErrorKind.OVERLOADED),
        (529, (), "", ErrorKind.OVERLOADED),
        (502, (), "<html>", ErrorKind.SERVER),
        (408, (), "", ErrorKind.TIMEOUT),
        (402, (), "", ErrorKind.QUOTA),
        (None, (), "the engine is overloaded", ErrorKind.OVERLOADED),
        (None, ("mystery",), "", None),
    ],
)
def test_evidence_order(
    status: int | None, types: tuple[str | None, ...], message: str, kind: ErrorKind | None
) -> None:
    assert classify(status=status, server_types=types, message=message) == kind
