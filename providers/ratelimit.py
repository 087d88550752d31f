"""The rate-limit headroom a server reports with every response, in vendor-neutral terms.

Anthropic sends ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`` (reset as an
RFC 3339 time); OpenAI and most compatible servers send
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (reset as a duration: ``6m0s``,
``20ms``, ``1.5s``). Both mean the same thing: how much of the limit is left and when it is
full again. `recovery` paces requests on it before the limit is hit.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["Headroom", "RateLimits", "rate_limits_from_headers"]


class Headroom(BaseModel):
    """One limit as the server reported it.

    Attributes:
        limit: The most the window allows.
        remaining: What is left of it now.
        reset_in: Seconds until it is fully replenished, if the server said.
    """

    model_config = ConfigDict(frozen=True)

    limit: int
    remaining: int
    reset_in: float | None = None


class RateLimits(BaseModel):
    """The request and token limits a response reported (either may be missing)."""

    model_config = ConfigDict(frozen=True)

    requests: Headroom | None = None
    tokens: Headroom | None = None


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def rate_limits_from_headers(
    headers: Mapping[str, str], now: Callable[[], float] = time.time
) -> RateLimits | None:
    """The headroom in ``headers``, or None when they carry no rate-limit headers."""
    lowered = {name.lower(): value for name, value in headers.items()}
    requests = _anthropic(lowered, "requests", now) or _openai(lowered, "requests")
    tokens = _anthropic(lowered, "tokens", now) or _anthropic(lowered, "input-tokens", now)
    tokens = tokens or _openai(lowered, "tokens")
    if requests is None and tokens is None:
        return None
    return RateLimits(requests=requests, tokens=tokens)


def _anthropic(headers: dict[str, str], what: str, now: Callable[[], float]) -> Headroom | None:
    prefix = f"anthropic-ratelimit-{what}-"
    reset = headers.get(prefix + "reset")
    return _headroom(
        headers.get(prefix + "limit"),
        headers.get(prefix + "remaining"),
        _seconds_until(reset, now) if reset else None,
    )


def _openai(headers: dict[str, str], what: str) -> Headroom | None:
    reset = headers.get(f"x-ratelimit-reset-{what}")
    return _headroom(
        headers.get(f"x-ratelimit-limit-{what}"),
        headers.get(f"x-ratelimit-remaining-{what}"),
        _duration(reset) if reset else None,
    )


def _headroom(limit: str | None, remaining: str | None, reset_in: float | None) -> Headroom | None:
    if limit is None or remaining is None:  # most servers send none: no exception to raise
        return None
    try:
        whole, left = int(float(limit or "")), int(float(remaining or ""))
    except ValueError:
        return None
    if whole <= 0 or left < 0:
        return None
    return Headroom(limit=whole, remaining=min(left, whole), reset_in=reset_in)


def _seconds_until(stamp: str, now: Callable[[], float]) -> float | None:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now())


def _duration(text: str) -> float | None:
    """``6m0s`` → 360.0, ``20ms`` → 0.02, ``1.5`` → 1.5; None if unreadable."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(a + u for a, u in parts) != text:
        return None
    return sum(float(amount) * _UNIT[unit] for amount, unit in parts)
