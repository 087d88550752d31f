"""One error for a call that every model failed, listing what each model said."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent.llm import ErrorKind, LlmError
from agent.llm.models import ModelRef


@dataclass(frozen=True)
class Failure:
    """Why one model of the chain did not answer a call.

    Attributes:
        ref: The model.
        note: Why recovery stopped using it (``"3 overloads in a row"``, ``"skipped: ..."``).
        error: Its last error, if it was ever tried in this session.
        retry_after: Seconds until it may accept requests again, if known.
    """

    ref: ModelRef
    note: str
    error: LlmError | None = None
    retry_after: float | None = None


def combined_error(failures: Sequence[Failure]) -> LlmError:
    """The error raised when no model could answer.

    The kind, status, provider, model and request id are those of the first failure that
    carries an error: the model the session was using when the call began, which is the one
    the person configured and the one whose problem (a bad key, a quota) they most likely
    need to fix. ``retry_after`` is the soonest time any model said it may work again.
    """
    if not failures:
        raise ValueError("combined_error needs at least one failure")
    lead = next((f.error for f in failures if f.error is not None), None)
    waits = [f.retry_after for f in failures if f.retry_after is not None]
    retry_after = min(waits) if waits else None
    parts = [_line(failure) for failure in failures]
    head = "every model failed: " if len(failures) > 1 else ""
    message = head + "; ".join(parts)
    if retry_after is not None:
        message += f". Try again in {_duration(retry_after)}."
    return LlmError(
        lead.kind if lead else ErrorKind.UNKNOWN,
        message,
        status=lead.status if lead else None,
        provider=lead.provider if lead else failures[0].ref.provider,
        model=lead.model if lead else failures[0].ref.name,
        retry_after=retry_after,
        request_id=lead.request_id if lead else None,
        server_type=lead.server_type if lead else None,
    )


def _line(failure: Failure) -> str:
    error = failure.error
    if error is None:
        return f"{failure.ref}: {failure.note}"
    status = f" {error.status}" if error.status else ""
    return f"{failure.ref}: [{error.kind.value}{status}] {error.message} ({failure.note})"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
