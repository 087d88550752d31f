"""The error taxonomy every provider adapter translates its SDK's failures into.

Nothing above `providers`'s adapters ever catches a vendor exception: an adapter raises
`LlmError`, whose `kind` decides what recovery does (see the table in DESIGN §3).
Cancellation (`asyncio.CancelledError`, `KeyboardInterrupt`) is never wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TypeVar

from providers.ratelimit import RateLimits

A = TypeVar("A")
R = TypeVar("R")


class ErrorKind(StrEnum):
    """What went wrong, in terms of what can be done about it."""

    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    CONTEXT_OVERFLOW = "context_overflow"
    AUTH = "auth"
    PERMISSION = "permission"
    QUOTA = "quota"
    NOT_FOUND = "not_found"
    UNREACHABLE = "unreachable"
    """No endpoint answered at all (nothing listens, no such host, no route, TLS failed):
    tried again every second for a few seconds only (`recovery.policy`), then the next
    model; "try again later" to a script."""
    BAD_REQUEST = "bad_request"
    REFUSAL = "refusal"
    UNKNOWN = "unknown"

    @property
    def transient(self) -> bool:
        """Whether the same request may succeed if sent again later."""
        return self in _TRANSIENT


_TRANSIENT = frozenset(
    {
        ErrorKind.RATE_LIMIT,
        ErrorKind.OVERLOADED,
        ErrorKind.SERVER,
        ErrorKind.TIMEOUT,
        ErrorKind.CONNECTION,
        ErrorKind.UNKNOWN,
    }
)


class LlmError(Exception):
    """A failed model call, classified.

    Attributes:
        kind: The classification that drives recovery.
        message: Human-readable detail from the server or the transport.
        status: HTTP status, if there was one (200 for an in-stream error event).
        provider: Provider name, e.g. ``anthropic``.
        model: Model name at the provider.
        retry_after: Seconds the server asked us to wait, if it said.
        request_id: The provider's request id, for support and logs.
        server_type: The server's own error type or code (``overloaded_error``, ...).
        rate_limits: The headroom the server reported with the error, if it did.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        provider: str = "",
        model: str = "",
        retry_after: float | None = None,
        request_id: str | None = None,
        server_type: str | None = None,
        rate_limits: RateLimits | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.provider = provider
        self.model = model
        self.retry_after = retry_after
        self.request_id = request_id
        self.server_type = server_type
        self.rate_limits = rate_limits

    def __str__(self) -> str:
        where = f"{self.provider}:{self.model}" if self.model else self.provider
        status = f" {self.status}" if self.status else ""
        prefix = f"[{self.kind.value}{status}]"
        return f"{prefix} {where}: {self.message}" if where else f"{prefix} {self.message}"

    def __repr__(self) -> str:
        return (
            f"LlmError(kind={self.kind.value!r}, status={self.status!r}, "
            f"provider={self.provider!r}, model={self.model!r}, message={self.message!r})"
        )


class MalformedAnswer(ValueError):
    """A server's answer (a stream event, a response body) without its API's shape.

    The adapters read the server's JSON as it came, not through the SDKs' models; the
    adapter turns this into a `ErrorKind.SERVER` error.
    """


_SHAPE_ERRORS = (LookupError, TypeError, ValueError, AttributeError)
"""What reading a dict of the wrong shape raises (pydantic's ValidationError is a ValueError)."""


@contextmanager
def reading(answer: object) -> Iterator[None]:
    """Read ``answer`` (a server's JSON) in the block: a wrong shape raises `MalformedAnswer`.

    Keep only the reading in the block: a delta handler's own bug is not the server's fault.
    (Per stream event, `read_with` does the same without a context manager's cost.)
    """
    try:
        yield
    except MalformedAnswer:
        raise
    except _SHAPE_ERRORS as exc:
        raise _malformed(answer, exc) from exc


def read_with(read: Callable[[A], R], answer: A) -> R:
    """``read(answer)``; a wrong shape of ``answer`` raises `MalformedAnswer`, as `reading`."""
    try:
        return read(answer)
    except MalformedAnswer:
        raise
    except _SHAPE_ERRORS as exc:
        raise _malformed(answer, exc) from exc


def _malformed(answer: object, exc: BaseException) -> MalformedAnswer:
    return MalformedAnswer(f"{repr(answer)[:200]} ({type(exc).__name__})")
