"""A dead endpoint is told apart from a flaky one, and named with what to check.

Recovery backs off a dropped connection for a minute and more, which is right for a
connection that dropped and wrong for an endpoint where nothing listens: a ``base_url``
pointing at a closed port cost 70 to 85 silent seconds. `EndpointGuard` sits around one
adapter and only translates: when no connection could be made at all (refused, no such
host, no route, TLS failed) the call fails as `ErrorKind.UNREACHABLE`, with a message such as
"nothing listens on 127.0.0.1:8080 — is the server running?". What happens next is
`recovery.policy.decide`'s choice, as for every failure: it tries again every second for a
few seconds (a server being started is used as soon as it listens; TLS is not waited for),
then moves to the next model. The guard says what it sees as events — `EndpointUnreachable`
once per outage, `EndpointAnswers` when it is back — and each face words them. A 404 from
an OpenAI-compatible server whose ``base_url`` lacks ``/v1`` says that is the likely cause.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal
from urllib.parse import urlsplit

from providers import ErrorKind, LlmError, Provider
from providers.adapters.unreachable import Unreachable, unreachable
from providers.events import Event, EventSink
from providers.provider import ChatRequest, ChatResponse, DeltaHandler
from recovery.policy import NOT_FIXED_BY_WAITING, UNREACHABLE_WINDOW

__all__ = ["EndpointAnswers", "EndpointGuard", "EndpointUnreachable"]


class EndpointUnreachable(Event):
    """No connection could be made to a model's endpoint; it is tried again for a while."""

    type: Literal["endpoint_unreachable"] = "endpoint_unreachable"
    url: str
    reason: str
    """Why, in words: connection refused, the host name does not resolve, ..."""
    window: float
    """Seconds it is tried again (0: not, waiting does not fix it)."""

    def describe(self) -> str:
        if self.window <= 0:
            return f"Cannot reach {self.url} ({self.reason})."
        return (
            f"Cannot reach {self.url} ({self.reason}); trying again for up to {self.window:g} s..."
        )


class EndpointAnswers(Event):
    """An endpoint that could not be reached answered again."""

    type: Literal["endpoint_answers"] = "endpoint_answers"
    url: str

    def describe(self) -> str:
        return f"{self.url} answers again."


class EndpointGuard:
    """A `Provider` around ``inner`` that names a dead endpoint and what to check.

    Args:
        inner: The adapter.
        base_url: Where ``inner`` sends its requests (for the messages).
        wants_v1: An OpenAI-compatible endpoint: its ``base_url`` normally ends in ``/v1``.
        emit: Where `EndpointUnreachable` and `EndpointAnswers` go (the session's bus).
        clock: For how long the endpoint has been unreachable.
    """

    def __init__(
        self,
        inner: Provider,
        base_url: str,
        *,
        wants_v1: bool = False,
        emit: EventSink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.base_url = base_url
        parts = urlsplit(base_url)
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._https = parts.scheme == "https"
        self._wants_v1 = wants_v1 and "/v1" not in parts.path
        self._emit = emit
        self._clock = clock
        self._down_since: float | None = None
        """When the outage the person was told about began; None while it answers."""

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        try:
            response = await self.inner.chat(request, on_delta)
        except LlmError as error:
            found = unreachable(error)
            if found is None:
                self._answered()  # it answered, with an error
                better = self._missing_v1(error)
                if better is None:
                    raise
                raise better from error
            raise self._unreachable(error, *found) from error
        self._answered()
        return response

    def _answered(self) -> None:
        if self._down_since is not None:
            self._down_since = None
            self._say(EndpointAnswers(url=self.base_url))

    def _unreachable(self, error: LlmError, reason: Unreachable, detail: str) -> LlmError:
        now = self._clock()
        waits = reason is not Unreachable.TLS
        # A new outage (or one the person has not heard about for a while) is said once.
        if self._down_since is None or now - self._down_since > 2 * UNREACHABLE_WINDOW:
            self._down_since = now
            window = UNREACHABLE_WINDOW if waits else 0.0
            self._say(EndpointUnreachable(url=self.base_url, reason=reason, window=window))
        elapsed = now - self._down_since
        still = f"; still so after {elapsed:.0f} s" if waits and elapsed >= 1 else ""
        return LlmError(
            ErrorKind.UNREACHABLE,
            self._explain(reason, detail, still),
            provider=error.provider,
            model=error.model,
            server_type=NOT_FIXED_BY_WAITING if not waits else reason.name.lower(),
        )

    def _say(self, event: Event) -> None:
        if self._emit is not None:
            self._emit(event)

    def _explain(self, reason: Unreachable, detail: str, still: str) -> str:
        where = f"{self._host}:{self._port}"
        if reason is Unreachable.REFUSED:
            what = f"nothing listens on {where} ({self.base_url}{still}) — is the server running?"
        elif reason is Unreachable.DNS:
            what = f"cannot resolve {self._host} ({self.base_url}{still}) — check the host name"
            what += " in base_url, and the network"
        elif reason is Unreachable.NO_ROUTE:
            what = f"no route to {where} ({self.base_url}{still}) — check the network and"
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
