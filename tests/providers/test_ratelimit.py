"""Rate-limit headroom read from both vendors' headers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from providers.ratelimit import Headroom, RateLimits, rate_limits_from_headers

NOW = 1_800_000_000.0


def test_anthropic_headers_give_requests_and_tokens_with_reset_times() -> None:
    headers = {
        "Anthropic-RateLimit-Requests-Limit": "50",
        "anthropic-ratelimit-requests-remaining": "3",
        "anthropic-ratelimit-requests-reset": "2027-01-15T08:00:12Z",
        "anthropic-ratelimit-tokens-limit": "40000",
        "anthropic-ratelimit-tokens-remaining": "1200",
        "anthropic-ratelimit-tokens-reset": "2027-01-15T08:00:30+00:00",
    }
    now = datetime(2027, 1, 15, 8, 0, 0, tzinfo=UTC).timestamp()

    limits = rate_limits_from_headers(headers, now=lambda: now)

    assert limits == RateLimits(
        requests=Headroom(limit=50, remaining=3, reset_in=12.0),
        tokens=Headroom(limit=40000, remaining=1200, reset_in=30.0),
    )


@pytest.mark.parametrize(
    ("reset", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5)],
)
def test_openai_reset_durations(reset: str, seconds: float) -> None:
    headers = {
        "x-ratelimit-limit-requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": reset,
    }

    limits = rate_limits_from_headers(headers)

    assert limits is not None
    assert limits.requests is not None
    assert limits.requests.reset_in == pytest.approx(seconds)
    assert limits.tokens is None


def test_anthropic_input_tokens_stand_in_for_missing_combined_tokens() -> None:
    headers = {
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "29000",
    }

    limits = rate_limits_from_headers(headers, now=lambda: NOW)

    assert limits == RateLimits(tokens=Headroom(limit=30000, remaining=29000))


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-ratelimit-limit-requests": "many", "x-ratelimit-remaining-requests": "3"},
        {"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0"},
        {"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "-1"},
    ],
)
def test_missing_or_garbled_headers_give_nothing(headers: dict[str, str]) -> None:
    assert rate_limits_from_headers(headers) is None


def test_unreadable_reset_keeps_the_counts() -> None:
    headers = {
        "x-ratelimit-limit-requests": "10",
        "x-ratelimit-remaining-requests": "12",
        "x-ratelimit-reset-requests": "soon",
    }

    limits = rate_limits_from_headers(headers)

    assert limits == RateLimits(requests=Headroom(limit=10, remaining=10, reset_in=None))
