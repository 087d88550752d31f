"""A dead endpoint fails within seconds, naming the URL and what to check.

Recovery retries a connection error for a minute and more, which is right for a connection
that dropped and wrong for an endpoint where nothing listens: a ``base_url`` pointing at a
closed port cost 70 to 85 silent seconds. `EndpointGuard` sits around one adapter. When no
connection could be made at all (refused, no such host, no route) it says so on stderr, checks
the endpoint again for up to `WINDOW` seconds, and sends the request again as soon as it
answers; if it never does (or TLS failed, which waiting does not fix) the call fails as
`ErrorKind.UNREACHABLE`, so recovery moves to the next model at once instead of retrying, with
a message such as "nothing listens on 127.0.0.1:8080 — is the server running?". A 404 from an
OpenAI-compatible server whose ``base_url`` lacks ``/v1`` says that is the likely cause.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from providers import ErrorKind, LlmError, Provider
from providers.adapters.unreachable import Unreachable, unreachable
from providers.provider import ChatRequest, ChatResponse, DeltaHandler

__all__ = ["WINDOW", "EndpointGuard"]

WINDOW = 10.0
"""Seconds a dead endpoint is given to come back before the call fails."""
PROBE_EVERY = 1.0
Probe = Callable[[str, int], Awaitable[bool]]


def _to_stderr(line: str) -> None:
    # On a terminal the REPL's status line may be drawn where the cursor is: clear it first,
    # so the line stands alone and the status line is redrawn under it.
    start = "\r\x1b[2K" if sys.stderr.isatty() else ""
    print(f"{start}{line}", file=sys.stderr, flush=True)


async def can_connect(host: str, port: int) -> bool:
    """Whether a TCP connection to ``host:port`` opens within a second."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), PROBE_EVERY)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


class EndpointGuard:
    """A `Provider` around ``inner`` that tells a dead endpoint from a flaky one.

    Args:
        inner: The adapter.
        base_url: Where ``inner`` sends its requests (for the messages and the probes).
        wants_v1: An OpenAI-compatible endpoint: its ``base_url`` normally ends in ``/v1``.
        window: Seconds the endpoint is given to come back.
        announce: Where the progress line goes (stderr).
        probe: Whether the endpoint accepts connections now.
    """

    def __init__(
        self,
        inner: Provider,
        base_url: str,
        *,
        wants_v1: bool = False,
        window: float = WINDOW,
        announce: Callable[[str], None] = _to_stderr,
        probe: Probe = can_connect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.base_url = base_url
        parts = urlsplit(base_url)
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._https = parts.scheme == "https"
        self._wants_v1 = wants_v1 and "/v1" not in parts.path
        self._window = window
        self._announce = announce
        self._probe = probe
        self._clock = clock

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        try:
            return await self.inner.chat(request, on_delta)
        except LlmError as error:
            found = unreachable(error)
            if found is None:
                better = self._missing_v1(error)
                if better is None:
                    raise
                raise better from error
            reason, detail = found
            if reason is not Unreachable.TLS and await self._comes_back(reason):
                return await self.inner.chat(request, on_delta)
            message = self._explain(reason, detail)
            raise LlmError(
                ErrorKind.UNREACHABLE, message, provider=error.provider, model=error.model
            ) from error

    async def _comes_back(self, reason: Unreachable) -> bool:
        deadline = self._clock() + self._window
        self._announce(
            f"agent: cannot reach {self.base_url} ({reason}); "
            f"checking again for up to {self._window:g} s..."
        )
        while (left := deadline - self._clock()) > 0:
            await asyncio.sleep(min(PROBE_EVERY, left))
            if await self._probe(self._host, self._port):
                self._announce(f"agent: {self.base_url} answers again.")
                return True
        return False

    def _explain(self, reason: Unreachable, detail: str) -> str:
        where = f"{self._host}:{self._port}"
        waited = f"; still so after {self._window:g} s" if reason is not Unreachable.TLS else ""
        if reason is Unreachable.REFUSED:
            what = f"nothing listens on {where} ({self.base_url}{waited}) — is the server running?"
        elif reason is Unreachable.DNS:
            what = f"cannot resolve {self._host} ({self.base_url}{waited}) — check the host name"
            what += " in base_url, and the network"
        elif reason is Unreachable.NO_ROUTE:
            what = f"no route to {where} ({self.base_url}{waited}) — check the network and"
            what += " the address in base_url"
        else:
            what = f"TLS handshake with {where} failed ({detail})"
            what += (
                " — a local server usually speaks plain http: try http:// in base_url"
                if self._https
                else " — check base_url"
            )
        return what

    def _missing_v1(self, error: LlmError) -> LlmError | None:
        """A 404 for the path itself (not an unknown model) where ``/v1`` is missing."""
        if not (self._wants_v1 and error.kind is ErrorKind.NOT_FOUND and error.status == 404):
            return None
        if error.server_type in ("model_not_found", "not_found_error"):
            return None
        suggested = self.base_url.rstrip("/") + "/v1"
        return LlmError(
            ErrorKind.NOT_FOUND,
            f"{self.base_url} answered 404 (not found) for the chat endpoint — is /v1 missing "
            f"from base_url? Try {suggested}. (The server said: {error.message[:200]})",
            status=404,
            provider=error.provider,
            model=error.model,
            request_id=error.request_id,
        )
