"""Vendor-neutral pieces of error classification, shared by the provider adapters.

Order of evidence (DESIGN §3): the server's own error type/code and the HTTP status first,
then the exception class (each adapter maps its SDK's classes), message keywords last.
Also here: how long the server asked us to wait (headers, then hints in the message).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

from providers.errors import ErrorKind

__all__ = [
    "classify",
    "classify_server_type",
    "classify_status",
    "is_context_overflow",
    "retry_after",
    "retry_after_from_headers",
    "retry_after_from_message",
]

_OVERFLOW_HINTS = (
    "prompt is too long",
    "context_length_exceeded",
    "exceed_context_size_error",
    "maximum context length",
    "context window",
    "context length",
    "too many tokens",
    "exceeds the context",
    "input is too long",
)

# The server's own error type or code, lowercased. Both vendors' vocabularies, plus the ones
# common OpenAI-compatible servers (vLLM, llama.cpp, Ollama) use.
_SERVER_TYPES: dict[str, ErrorKind] = {
    "rate_limit_error": ErrorKind.RATE_LIMIT,
    "rate_limit_exceeded": ErrorKind.RATE_LIMIT,
    "overloaded_error": ErrorKind.OVERLOADED,
    "overloaded": ErrorKind.OVERLOADED,
    "server_overloaded": ErrorKind.OVERLOADED,
    "api_error": ErrorKind.SERVER,
    "server_error": ErrorKind.SERVER,
    "internal_server_error": ErrorKind.SERVER,
    "timeout_error": ErrorKind.TIMEOUT,
    "context_length_exceeded": ErrorKind.CONTEXT_OVERFLOW,
    "exceed_context_size_error": ErrorKind.CONTEXT_OVERFLOW,
    "authentication_error": ErrorKind.AUTH,
    "invalid_api_key": ErrorKind.AUTH,
    "permission_error": ErrorKind.PERMISSION,
    "insufficient_quota": ErrorKind.QUOTA,
    "billing_error": ErrorKind.QUOTA,
    "not_found_error": ErrorKind.NOT_FOUND,
    "model_not_found": ErrorKind.NOT_FOUND,
    "content_filter": ErrorKind.REFUSAL,
    "content_policy_violation": ErrorKind.REFUSAL,
    "request_too_large": ErrorKind.BAD_REQUEST,
    "invalid_request_error": ErrorKind.BAD_REQUEST,
}

_GENERIC_TYPES = frozenset(
    {"api_error", "server_error", "internal_server_error", "invalid_request_error", "error"}
)

_STATUS: dict[int, ErrorKind] = {
    400: ErrorKind.BAD_REQUEST,
    401: ErrorKind.AUTH,
    402: ErrorKind.QUOTA,
    403: ErrorKind.PERMISSION,
    404: ErrorKind.NOT_FOUND,
    408: ErrorKind.TIMEOUT,
    413: ErrorKind.BAD_REQUEST,
    422: ErrorKind.BAD_REQUEST,
    429: ErrorKind.RATE_LIMIT,
    503: ErrorKind.OVERLOADED,
    529: ErrorKind.OVERLOADED,
}

_MESSAGE_HINTS: tuple[tuple[str, ErrorKind], ...] = (
    ("overloaded", ErrorKind.OVERLOADED),
    ("rate limit", ErrorKind.RATE_LIMIT),
    ("too many requests", ErrorKind.RATE_LIMIT),
    ("quota", ErrorKind.QUOTA),
    ("timed out", ErrorKind.TIMEOUT),
    ("timeout", ErrorKind.TIMEOUT),
)

_WAIT_HINT = re.compile(
    r"(?:try again|retry|retry after|wait)\s+(?:in\s+|after\s+)?"
    r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)\b",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0}


def is_context_overflow(text: str) -> bool:
    """Whether an error text says the prompt does not fit the model's context window."""
    lowered = text.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)


def classify_server_type(server_type: str | None) -> ErrorKind | None:
    """The kind named by the server's own error type or code, if we know it."""
    return _SERVER_TYPES.get(server_type.lower()) if server_type else None


def classify_status(status: int | None) -> ErrorKind | None:
    """The kind an HTTP status implies on its own (None for 2xx, unknown or missing)."""
    if status is None or status < 400:
        return None
    if status in _STATUS:
        return _STATUS[status]
    return ErrorKind.SERVER if status >= 500 else ErrorKind.BAD_REQUEST


def classify(
    *,
    status: int | None,
    server_types: tuple[str | None, ...] = (),
    message: str = "",
) -> ErrorKind | None:
    """Classify by server type/code, then status, then message keywords.

    A specific type (``insufficient_quota``) beats the status (429); the status beats a generic
    type (``api_error`` on a 503). A ``bad_request`` verdict becomes ``context_overflow`` when
    the message says so: vendors send overflow as a plain 400 ``invalid_request_error``.
    Returns None when nothing here decides; the adapter then uses the exception class.
    """
    specific = [t for t in server_types if t and t.lower() not in _GENERIC_TYPES]
    generic = [t for t in server_types if t and t.lower() in _GENERIC_TYPES]
    kind = next((k for t in specific if (k := classify_server_type(t)) is not None), None)
    if kind is None:
        # A generic type (api_error, invalid_request_error) says less than the status does.
        by_type = next((k for t in generic if (k := classify_server_type(t)) is not None), None)
        kind = classify_status(status) or by_type
    if kind in (None, ErrorKind.BAD_REQUEST) and is_context_overflow(message):
        return ErrorKind.CONTEXT_OVERFLOW
    if kind is None:
        lowered = message.lower()
        kind = next((k for hint, k in _MESSAGE_HINTS if hint in lowered), None)
    return kind


def retry_after_from_headers(
    headers: Mapping[str, str], now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def retry_after_from_message(message: str) -> float | None:
    """Seconds to wait from hints like "try again in 20s" or "Please retry in 1.5s"."""
    match = _WAIT_HINT.search(message)
    if match is None:
        return None
    amount, unit = float(match.group(1)), match.group(2).lower()
    factor = _UNIT_SECONDS["ms"] if unit.startswith(("ms", "milli")) else _UNIT_SECONDS[unit[0]]
    return amount * factor


def retry_after(
    headers: Mapping[str, str], message: str = "", now: Callable[[], float] = time.time
) -> float | None:
    """The server's requested wait: headers first, then a hint in the message, else None."""
    from_headers = retry_after_from_headers(headers, now)
    return from_headers if from_headers is not None else retry_after_from_message(message)
