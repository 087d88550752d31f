"""Every failed model request, told to whoever listens: retried, moved on from, or final.

`recovery.events.RetryScheduled` says only what was retried; a 401, a 404 or a 429 whose
wait is too long moves straight to the next model, and a bad request fails the call, with
no event of their own. Telemetry counts each of them as an ``agent.api_error``. With nobody
listening, telling costs one check: no `FailedRequest` is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from providers import LlmError, RequestKind

__all__ = ["FailedRequest", "FailureListener", "Next", "RequestFailures"]

Next = Literal["retry", "fallback", "fail"]
"""What the call does after the failure: send again to the same model, go on to another
model (or give up when none is left), or end with this error."""


@dataclass(frozen=True)
class FailedRequest:
    """One request a model did not answer."""

    model: str
    """The model as the chain names it (``anthropic:claude-sonnet-4-5``)."""
    error: LlmError
    attempt: int
    """Which send to this model in this call it was (1: the first)."""
    next: Next
    wait: float | None
    """Seconds before this model is sent to again: the backoff of a retry, else the server's
    retry-after (None without one)."""
    purpose: RequestKind = RequestKind.TURN
    """What the request was for: a turn's, or a side request's (a compaction's summary,
    web_fetch's answer over a page)."""


FailureListener = Callable[[FailedRequest], None]


class RequestFailures:
    """The listeners told of each failed request (`recovery.actions.Actions` tells them)."""

    def __init__(self) -> None:
        self._listeners: list[FailureListener] = []

    def subscribe(self, listener: FailureListener) -> None:
        """Tell ``listener`` of every failed request from now on."""
        self._listeners.append(listener)

    def tell(
        self,
        model: str,
        error: LlmError,
        attempt: int,
        next: Next,
        wait: float | None,
        purpose: RequestKind,
    ) -> None:
        """Tell every listener of one failed request (made for ``purpose``)."""
        if not self._listeners:
            return
        failed = FailedRequest(model, error, attempt, next, wait, purpose)
        for listener in self._listeners:
            listener(failed)

    def relay(self, failed: FailedRequest) -> None:
        """Tell every listener of ``failed``, told by another provider (one that serves the
        same session: a sub-agent's model of its own, ``small_model`` for side requests)."""
        for listener in self._listeners:
            listener(failed)
