"""How a call carries out what `recovery.policy.decide` chose.

`recovery.retry.RetryLoop` asks for a `Decision`; `Actions` does it: a wait before a send
(``WAIT``), a paid-for retry after a backoff (``RETRY``), the record of why a model is left
(``FALL_BACK``). Each announces itself with an event, and every failed request, whatever
comes next (``RAISE`` too), is told to the `RequestFailures` listeners. Nothing here chooses:
the decision is carried out as it was made.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from providers import ChatRequest, DeltaHandler, LlmError, StreamReset
from providers.models import ModelRef
from recovery.budget import RetryBudget
from recovery.call import CallLog, ModelTarget
from recovery.events import (
    BudgetExhausted,
    RecoveryEvent,
    RequestHeld,
    RetryScheduled,
    StreamRestarted,
)
from recovery.failures import Next, RequestFailures
from recovery.fleet.shared import Fleet, Hold
from recovery.policy import Action, Decision
from recovery.report import Failure
from recovery.settings import RecoverySettings

Emit = Callable[[RecoveryEvent, str | None], None]
"""Publishes an event (with the request id to log it under, if any)."""

HELD_NOTICE_AFTER = 1.0
"""A request held back at least this many seconds is announced (a shorter wait is pacing
the person does not notice)."""

_NEXT: dict[Action, Next] = {Action.RAISE: "fail", Action.FALL_BACK: "fallback"}


class Actions:
    """Carries out the session's decisions: waits, retries, fallbacks, and their announcements.

    Args:
        settings: The recovery settings.
        emit: Publishes an event.
        clock: Monotonic seconds.
        sleep: Awaited for each wait and backoff.
        budget: The session's retry budget, which pays for each retry.
        last_error: Each model's last error, read to say why a model is left.
        failures: Told of every failed request.
        fleet: State shared with other agents on the same keys (None: this session alone).
    """

    def __init__(
        self,
        settings: RecoverySettings,
        *,
        emit: Emit,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
        budget: RetryBudget,
        last_error: dict[ModelRef, LlmError],
        failures: RequestFailures,
        fleet: Fleet | None,
    ) -> None:
        self._settings = settings
        self._emit = emit
        self._clock = clock
        self._sleep = sleep
        self._budget = budget
        self._last_error = last_error
        self._failures = failures
        self._fleet = fleet
        self.waited = 0.0
        """Seconds the session has spent waiting, before sends and between retries."""

    async def wait(
        self, decision: Decision, target: ModelTarget, call: CallLog, hold: Hold
    ) -> None:
        """Wait before a send (announced when the person would notice it)."""
        call.waited += decision.delay
        self.waited += decision.delay
        if decision.delay >= HELD_NOTICE_AFTER:
            held = RequestHeld(
                model=str(target.ref),
                delay=decision.delay,
                retry_at=self._clock() + decision.delay,
                server=hold.server,
                other_agent=hold.other_agent,
            )
            self._emit(held, None)
        await self._sleep(decision.delay)

    async def retry(
        self,
        decision: Decision,
        error: LlmError,
        target: ModelTarget,
        request: ChatRequest,
        attempt: int,
        call: CallLog,
    ) -> None:
        """Pay for a retry, announce it, and wait its backoff."""
        # decide saw these tokens and nothing has run since; another agent may have taken
        # the fleet's in between, and then this one retry goes unpaid there.
        self._budget.try_spend(decision.charge)
        if self._fleet is not None:
            self._fleet.try_spend(target.fleet_key, self._budget.cost(decision.charge))
        event = RetryScheduled(
            kind=error.kind,
            attempt=attempt + 1,
            max_attempts=self._settings.max_attempts,
            delay=decision.delay,
            retry_at=self._clock() + decision.delay,
            model=str(target.ref),
            provider=target.ref.provider,
            request_id=error.request_id,
            message=error.message,
            status=error.status,
            purpose=request.kind,
        )
        self._emit(event, error.request_id)
        call.waited += decision.delay
        self.waited += decision.delay
        await self._sleep(decision.delay)

    def fall_back(self, target: ModelTarget, decision: Decision, call: CallLog) -> None:
        """Record in ``call`` why it stops using ``target`` (the budget's end announced)."""
        error = self._last_error.get(target.ref)
        if error is None and decision.unavailable is not None:
            # Known only from the shared state (another agent was told): say what it means.
            error = LlmError(
                decision.unavailable,
                decision.reason,
                provider=target.ref.provider,
                model=str(target.ref),
                retry_after=decision.retry_after,
            )
        if decision.budget_exhausted and error is not None:
            event = BudgetExhausted(
                model=str(target.ref), kind=error.kind, tokens_left=self._budget.tokens
            )
            self._emit(event, error.request_id)
        call.failures.append(Failure(target.ref, decision.reason, error, decision.retry_after))

    def tell(
        self,
        target: ModelTarget,
        request: ChatRequest,
        error: LlmError,
        attempt: int,
        then: Decision | None,
    ) -> None:
        """Tell the failure listeners of a failed request and what the call does next.

        ``then`` is None for a trial request, which goes back to the fallback.
        """
        moved = _NEXT.get(then.action, "retry") if then is not None else "fallback"
        wait = then.delay if then is not None and moved == "retry" else error.retry_after
        self._failures.tell(str(target.ref), error, attempt, moved, wait, request.kind)

    def reset_stream(self, on_delta: DeltaHandler | None, target: ModelTarget, why: str) -> None:
        """Discard partly streamed output: tell the handler (if any), announce the restart."""
        if on_delta is not None:
            on_delta(StreamReset(reason=why))
        self._emit(StreamRestarted(model=str(target.ref), reason=why), None)
