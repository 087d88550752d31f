"""One error for a call that every model failed, listing what each model said."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from providers import ErrorKind, LlmError
from providers.models import ModelRef


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

    The kind, status and request id are those of the first failure that carries an error:
    the model the session was using when the call began, which is the one the person
    configured and the one whose problem (a bad key, a quota) they most likely need to fix.
    ``retry_after`` is the soonest time any model said it may work again.

    Each model is named once: with one model, as the error's provider and model (its
    ``str`` starts with them); with several, in the message, one part per model.
    """
    if not failures:
        raise ValueError("combined_error needs at least one failure")
    lead = next((f.error for f in failures if f.error is not None), None)
    waits = [f.retry_after for f in failures if f.retry_after is not None]
    retry_after = min(waits) if waits else None
    single = len(failures) == 1
    if single:
        message = _outcome(failures[0], tagged=False)
    else:
        message = "every model failed: " + "; ".join(
            f"{failure.ref}: {_outcome(failure, tagged=True)}" for failure in failures
        )
    if retry_after is not None:
        message += f". Try again in {_duration(retry_after)}."
    return LlmError(
        lead.kind if lead else ErrorKind.UNKNOWN,
        message,
        status=lead.status if lead else None,
        provider=failures[0].ref.provider if single else "",
        model=failures[0].ref.name if single else "",
        retry_after=retry_after,
        request_id=lead.request_id if lead else None,
        server_type=lead.server_type if lead else None,
    )


def _outcome(failure: Failure, *, tagged: bool) -> str:
    """What one model said and why recovery stopped, without the model's name.

    ``tagged`` adds the error's kind and status, which a lone failure's error carries itself.
    """
    error = failure.error
    if error is None:
        return failure.note
    if not tagged:
        return f"{error.message} ({failure.note})"
    status = f" {error.status}" if error.status else ""
    return f"[{error.kind.value}{status}] {error.message} ({failure.note})"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
