"""The retry loop: one request sent to one model until it answers or the policy moves on.

Each step asks `recovery.policy.decide` what to do and hands the decision to
`recovery.actions.Actions`, which carries it out (waits, retries, fallbacks, announcements).
`RetryLoop` also holds what the session shares between calls: the retry budget, the
per-model circuit breakers and each model's last error; with a `Fleet`, it publishes what it
learns to the other agents on the same key and consults what they learned before each send.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import replace

from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    LlmError,
    Purpose,
    StopReason,
)
from providers.models import ModelRef
from recovery.actions import Actions, Emit
from recovery.budget import CircuitBreaker, RetryBudget
from recovery.call import CallLog, DeltaCounter, ModelTarget
from recovery.events import CircuitClosed, CircuitOpened
from recovery.failures import RequestFailures
from recovery.fleet.shared import Fleet, Hold
from recovery.policy import POLICY, Action, CallState, decide
from recovery.settings import RecoverySettings
from recovery.usage import AnsweredRequest, UsageLedger


class RetryLoop:
    """Retries one model within a call; keeps the session's budget and breakers.

    Args:
        settings: The recovery settings.
        emit: Publishes an event (with the request id to log it under).
        clock: Monotonic seconds.
        sleep: Awaited for each wait and backoff (by `Actions`).
        rng: Jitter source.
        fleet: State shared with other agents on the same keys (None: this session alone).
    """

    def __init__(
        self,
        settings: RecoverySettings,
        *,
        emit: Emit,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
        rng: random.Random,
        fleet: Fleet | None = None,
    ) -> None:
        self._settings = settings
        self.fleet = fleet
        self._emit = emit
        self._clock = clock
        self._rng = rng
        self.budget = RetryBudget(settings)
        self.breakers: dict[ModelRef, CircuitBreaker] = {}
        self.last_error: dict[ModelRef, LlmError] = {}
        self.not_before: dict[ModelRef, float] = {}
        """Per model: the clock time before which its server asked not to be called again."""
        self.requests = 0
        self.usage = UsageLedger()
        self.failures = RequestFailures()
        self._act = Actions(
            settings,
            emit=emit,
            clock=clock,
            sleep=sleep,
            budget=self.budget,
            last_error=self.last_error,
            failures=self.failures,
            fleet=fleet,
        )

    @property
    def waited(self) -> float:
        """Seconds the session has spent waiting, before sends and between retries."""
        return self._act.waited

    def breaker(self, ref: ModelRef) -> CircuitBreaker:
        """The circuit breaker of ``ref`` (created closed on first use)."""
        if ref not in self.breakers:
            self.breakers[ref] = CircuitBreaker(
                self._settings.breaker_threshold, self._settings.breaker_cooldown, self._clock
            )
        return self.breakers[ref]

    def skipped_for(self, target: ModelTarget, *, shared: bool = True) -> float:
        """Seconds a failing ``target`` is still skipped (0: not).

        With ``shared``, the fleet's breaker counts too: a model that keeps failing for
        other agents is skipped here. Callers pass False when there is no other model to
        go to: then each agent's own breaker decides, so a person who just restarted their
        server is not locked out by failures another process saw.
        """
        breaker = self.breaker(target.ref)
        local = 0.0 if breaker.allows() else max(breaker.reopens_in, 1e-9)
        if self.fleet is None or not shared:
            return local
        return max(local, self.fleet.open_for(target.fleet_key))

    def passes_by(
        self, target: ModelTarget, call: CallLog, purpose: Purpose, *, other_models: bool
    ) -> bool:
        """Whether a call skips ``target`` without a request (its breaker is open).

        A skipped model is added to ``call.failures``, saying when it is tried again.
        ``other_models``: the chain has another model (see `skipped_for`).
        """
        skipped = self.skipped_for(target, shared=other_models)
        here = CallState(0, call.waited, 0, purpose, other_models, breaker_open=skipped)
        decision = decide(None, here, self._settings, jitter=0.0)
        if decision.action is not Action.FALL_BACK:
            return False
        self._act.fall_back(target, decision, call)
        return True

    async def run(
        self,
        target: ModelTarget,
        request: ChatRequest,
        on_delta: DeltaHandler | None,
        call: CallLog,
        has_fallback: bool,
    ) -> ChatResponse | None:
        """Send ``request`` to ``target`` until it answers (the response) or is given up on (None).

        Each step gathers where the call stands into a `CallState`, lets
        `recovery.policy.decide` choose, and carries the choice out.

        Raises:
            LlmError: for kinds the policy never retries nor falls back on.
        """
        attempt = overloads = 0
        await target.ready()
        while True:
            here = CallState(attempt, call.waited, overloads, request.purpose, has_fallback)
            here, hold = self._held(here, target, request)
            decision = decide(None, here, self._settings, jitter=0.0)
            if decision.action is Action.WAIT:
                await self._act.wait(decision, target, call, hold)
                continue
            if decision.action is Action.FALL_BACK:
                self._act.fall_back(target, decision, call)
                return None
            attempt += 1
            self._restart_stream(on_delta, call, target)
            tracker = DeltaCounter(on_delta) if on_delta is not None else None
            try:
                response = await self._send(target, request, tracker, call, attempt)
            except LlmError as error:
                overloads = overloads + 1 if POLICY[error.kind].overload else 0
                self._note(error, target, has_fallback)
                here = CallState(attempt, call.waited, overloads, request.purpose, has_fallback)
                here = self._standing(here, target)
                decision = decide(error, here, self._settings, self._rng.random())
                if tracker is not None and tracker.count:
                    call.stale_stream = f"{error.kind.value}: {error.message}"
                self._act.tell(target, request, error, attempt, decision)
                if decision.action is Action.RAISE:
                    raise
                if decision.action is Action.FALL_BACK:
                    self._act.fall_back(target, decision, call)
                    return None
                await self._act.retry(decision, error, target, request, attempt, call)
            else:
                self._answered(target)
                return response

    async def _send(
        self,
        target: ModelTarget,
        request: ChatRequest,
        on_delta: DeltaHandler | None,
        call: CallLog,
        attempt: int,
    ) -> ChatResponse:
        call.requests += 1
        self.requests += 1
        reported, answered = None, False
        stop_renewing = self.fleet.keep_alive(target.fleet_key) if self.fleet is not None else None
        try:
            sent = self._clock()
            response = await target.provider.chat(request, on_delta)
            took = self._clock() - sent
            answer = AnsweredRequest(
                request.kind,
                model=response.model or target.ref.name,
                usage=response.usage,
                seconds=took,
                attempt=attempt,
                sent_to=str(target.ref),
            )
            self.usage.add(answer)
            reported = response.rate_limits
            answered = response.stop_reason is not StopReason.INCOMPLETE
        except LlmError as error:
            reported = error.rate_limits
            raise
        finally:
            if stop_renewing is not None:
                stop_renewing()
            if self.fleet is not None:
                self.fleet.release(target.fleet_key, reported, answered=answered)
        if response.stop_reason is StopReason.INCOMPLETE:
            raise LlmError(
                ErrorKind.CONNECTION,
                "the response ended before it was complete",
                provider=target.ref.provider,
                model=target.ref.name,
                request_id=response.request_id,
            )
        return response

    async def trial(
        self, target: ModelTarget, request: ChatRequest, on_delta: DeltaHandler | None
    ) -> ChatResponse | LlmError | float:
        """One half-open request to a model the session fell back from: no retry.

        Returns:
            The response; the error it failed with (the partly streamed output already
            reset); or, without a send, the seconds before it may be sent to (a server's
            wait, an open breaker in the fleet).
        """
        await target.ready()
        closed_for = self.skipped_for(target)
        if closed_for > 0:
            return closed_for
        here, _ = self._held(CallState(0, 0.0, 0, request.purpose, True), target, request)
        if here.held > 0:
            return here.held
        tracker = DeltaCounter(on_delta) if on_delta is not None else None
        try:
            response = await self._send(target, request, tracker, CallLog(), 1)
        except LlmError as error:
            self._note(error, target, has_fallback=True)
            self._act.tell(target, request, error, 1, None)
            if tracker is not None and tracker.count:
                why = f"{target.ref} failed again ({error.kind.value})"
                self._act.reset_stream(tracker.inner, target, why)
            return error
        self._answered(target)
        return response

    def _held(
        self, here: CallState, target: ModelTarget, request: ChatRequest
    ) -> tuple[CallState, Hold]:
        """``here`` with what holds the next request back, and that hold.

        A server's wait binds the whole session (with a fleet, every agent on the key), not
        just the call that was told: a request sent earlier would be rejected again and
        counts against the client. The fleet also paces requests when headroom is low; when
        nothing holds the request back, the fleet has reserved its slot.
        """
        local = self.not_before.get(target.ref, 0.0) - self._clock()
        if local > 0:
            hold = Hold(local, server=True)
        elif self.fleet is None:
            hold = Hold(0.0)
        else:
            # About four characters a token: enough to pace on a tokens-per-minute limit.
            hold = self.fleet.acquire(target.fleet_key, request.chars() // 4)
            # This session's own wait is over, so a server's wait here was told to another.
            hold = replace(hold, other_agent=hold.server)
        return replace(here, held=hold.seconds, held_by_server=hold.server), hold

    def _standing(self, here: CallState, target: ModelTarget) -> CallState:
        """``here`` with the model's breakers and the retry budget left (session and fleet)."""
        budget = self.budget.tokens
        if self.fleet is not None:
            budget = min(budget, self.fleet.budget_left(target.fleet_key))
        return replace(here, breaker_open=self.skipped_for(target), budget_left=budget)

    def _note(self, error: LlmError, target: ModelTarget, has_fallback: bool) -> None:
        """Record a failure where later requests see it, before anything is decided.

        The failure is a fact whatever the call does next: the server's wait binds every
        later request, and the breakers count it first so that the failure that opens one
        is the one that moves the call on.
        """
        self.last_error[target.ref] = error
        row = POLICY[error.kind]
        if row.honour_server_wait and error.retry_after is not None:
            until = self._clock() + error.retry_after
            self.not_before[target.ref] = max(self.not_before.get(target.ref, until), until)
            if self.fleet is not None:
                self.fleet.server_wait(target.fleet_key, error.retry_after)
        if not row.model_fault:
            return
        if self.fleet is not None:
            self.fleet.failure(target.fleet_key)
        breaker = self.breaker(target.ref)
        if breaker.record_failure():
            cooldown = self._settings.breaker_cooldown
            opened = CircuitOpened(
                model=str(target.ref),
                failures=breaker.failures,
                cooldown=cooldown,
                retry_at=self._clock() + cooldown,
                fallback=has_fallback,
            )
            self._emit(opened, error.request_id)

    def _answered(self, target: ModelTarget) -> None:
        """A request was answered: refill the budget and close the model's breaker."""
        self.budget.refill()
        if self.breaker(target.ref).record_success():
            self._emit(CircuitClosed(model=str(target.ref)), None)

    def _restart_stream(
        self, on_delta: DeltaHandler | None, call: CallLog, target: ModelTarget
    ) -> None:
        """Discard what a failed request streamed before the next one is sent."""
        if call.stale_stream is not None:
            self._act.reset_stream(on_delta, target, call.stale_stream)
            call.stale_stream = None
