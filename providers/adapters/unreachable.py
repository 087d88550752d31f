"""Why no connection could be made at all: refused, no such host, a TLS failure, no route.

The SDKs raise one "connection error" for all of these and for a connection that dropped
midway; their causes (kept on ``__cause__`` / ``__context__``) tell them apart. A dropped
connection is worth retrying; an endpoint where nothing listens, a host name that does not
resolve or a server that does not speak TLS needs the person to check something, and the
message says what.
"""

from __future__ import annotations

import errno
import socket
import ssl
from enum import StrEnum

__all__ = ["Unreachable", "unreachable"]


class Unreachable(StrEnum):
    """Why the endpoint could not be reached."""

    REFUSED = "connection refused"
    DNS = "the host name does not resolve"
    TLS = "TLS handshake failed"
    NO_ROUTE = "no route to the host"


_NO_ROUTE = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL})


def unreachable(exc: BaseException) -> tuple[Unreachable, str] | None:
    """Why ``exc`` (or an exception it was raised from) says the endpoint is unreachable,
    with the lowest cause's own text; None for anything else (a dropped stream, a timeout)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 16:
        seen.add(id(current))
        reason = _reason(current)
        if reason is not None:
            return reason, str(current)
        current = current.__cause__ or current.__context__
    return None


def _reason(exc: BaseException) -> Unreachable | None:
    if isinstance(exc, ConnectionRefusedError):
        return Unreachable.REFUSED
    if isinstance(exc, socket.gaierror):
        return Unreachable.DNS
    if isinstance(exc, ssl.SSLError):
        return Unreachable.TLS
    if isinstance(exc, OSError) and exc.errno in _NO_ROUTE:
        return Unreachable.NO_ROUTE
    return None
