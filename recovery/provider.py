"""`RecoveringProvider`: a `Provider` that retries, budgets, fails over and escalates.

Within one `chat` call it walks the model chain from the session's current model: each
model gets requests until `recovery.policy.decide` says to retry no more, then the next
model takes over (an announced switch). After a passing failure the model left is tried
again at the start of a later step (`recovery.detour`); after a bad key it is not.
Everything it does is an event.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    EventSink,
    LlmError,
    Purpose,
    RequestKind,
    StopReason,
    StreamReset,
)
from providers.models import ModelRef
from recovery.call import CallLog, DeltaCounter, ModelTarget
from recovery.detour import Detour, DetourView
from recovery.escalation import completeness, escalated_limit, replay
from recovery.events import (
    FallbackActivated,
    GaveUp,
    ModelRestored,
    RecoveryEvent,
    TokensEscalated,
)
from recovery.failures import RequestFailures
from recovery.fleet import Fleet, FleetView
from recovery.report import combined_error
from recovery.retry import RetryLoop
from recovery.settings import RecoverySettings
from recovery.usage import UsageLedger

_log = structlog.get_logger("recovery")


@dataclass(frozen=True)
class RecoveryStats:
    """Counters for ``/stats``: what recovery has done so far this session."""

    current: str
    requests: int
    retries: int
    fallbacks: int
    escalations: int
    stream_restarts: int
    budget_exhausted: int
    circuits_opened: int
    gave_up: int
    waited: float
    budget_tokens: float
    open_circuits: tuple[str, ...]
    fleet_backend: str = ""
    """Where state shared with other agents lives: file, redis, process (empty: nowhere)."""
    fleet: tuple[FleetView, ...] = ()
    detour: DetourView | None = None
    """Set while the session runs on a fallback: since when, why, when the primary is next
    tried."""
    time_on_models: tuple[tuple[str, float], ...] = ()
    """Seconds the session has run on each model, in the order first used."""


class RecoveringProvider:
    """A `Provider` that makes model calls survive transient failures (DESIGN §4).

    Args:
        chain: Models in order of preference; duplicates are dropped.
        settings: Attempts, waits, budget, breaker and fallback thresholds.
        events: Receives every `recovery.events` event.
        clock: Monotonic seconds, for breaker cool-downs and countdowns.
        sleep: Awaited for every backoff; cancellation propagates out of it.
        rng: Source of backoff jitter (seed it for reproducible waits).
        fleet: Recovery state shared with other agents on the same keys.

    Raises:
        ValueError: if ``chain`` is empty.
    """

    def __init__(
        self,
        chain: Sequence[ModelTarget],
        *,
        settings: RecoverySettings,
        events: EventSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        fleet: Fleet | None = None,
    ) -> None:
        self._chain: list[ModelTarget] = []
        for target in chain:
            if all(target.ref != known.ref for known in self._chain):
                self._chain.append(target)
        if not self._chain:
            raise ValueError("the model chain is empty; set 'model' in the configuration")
        self._settings = settings
        self._events = events
        self._clock = clock
        self._sleep = sleep
        self._active = 0
        self._detour: Detour | None = None
        self._on_since = clock()
        self._time_on: dict[str, float] = {}
        self._counts: Counter[str] = Counter()
        self._retry = RetryLoop(
            settings,
            emit=self._emit,
            clock=clock,
            sleep=sleep,
            rng=rng or random.Random(),
            fleet=fleet,
        )

    @property
    def usage(self) -> UsageLedger:
        """Tokens of every answer this provider got, per model and per purpose."""
        return self._retry.usage

    @property
    def failures(self) -> RequestFailures:
        """Who is told of each request a model did not answer."""
        return self._retry.failures

    @property
    def current(self) -> ModelRef:
        """The model the next call starts with."""
        return self._chain[self._active].ref

    @property
    def chain(self) -> tuple[ModelTarget, ...]:
        """The de-duplicated model chain."""
        return tuple(self._chain)

    def switch_to(self, target: ModelRef | ModelTarget) -> None:
        """Make ``target`` the current model (``/model``, or a resumed session's fallback).

        A `ModelTarget` not yet in the chain is appended to it; a bare `ModelRef` must
        already be in the chain.

        Raises:
            ValueError: if ``target`` is a `ModelRef` that is not in the chain.
        """
        ref = target.ref if isinstance(target, ModelTarget) else target
        for index, known in enumerate(self._chain):
            if known.ref == ref:
                self._move(index)
                self._detour = None  # the person chose: no trial takes it back
                return
        if not isinstance(target, ModelTarget):
            chain = ", ".join(str(t.ref) for t in self._chain)
            raise ValueError(f"model {ref} is not in the model chain ({chain})")
        self._chain.append(target)
        self._move(len(self._chain) - 1)
        self._detour = None

    def stats(self) -> RecoveryStats:
        """A snapshot of the counters."""
        return RecoveryStats(
            current=str(self.current),
            requests=self._retry.requests,
            retries=self._counts["retry_scheduled"],
            fallbacks=self._counts["fallback_activated"],
            escalations=self._counts["tokens_escalated"],
            stream_restarts=self._counts["stream_restarted"],
            budget_exhausted=self._counts["budget_exhausted"],
            circuits_opened=self._counts["circuit_opened"],
            gave_up=self._counts["gave_up"],
            waited=self._retry.waited,
            budget_tokens=self._retry.budget.tokens,
            open_circuits=tuple(
                str(ref) for ref, breaker in self._retry.breakers.items() if not breaker.allows()
            ),
            fleet_backend=fleet.store.name if (fleet := self._retry.fleet) else "",
            fleet=tuple(fleet.views()) if fleet else (),
            detour=self._detour_view(),
            time_on_models=tuple(self._times().items()),
        )

    def _detour_view(self) -> DetourView | None:
        detour, now = self._detour, self._clock()
        if detour is None:
            return None
        return DetourView(
            primary=str(self._chain[detour.home].ref),
            fallback=str(self.current),
            since_ago=now - detour.since,
            reason=detour.reason,
            next_trial_in=None if detour.next_trial is None else max(0.0, detour.next_trial - now),
            stays_because=detour.stays_because,
        )

    def _times(self) -> dict[str, float]:
        times = dict(self._time_on)
        current = str(self.current)
        times[current] = times.get(current, 0.0) + self._clock() - self._on_since
        return times

    async def chat(
        self, request: ChatRequest, on_delta: DeltaHandler | None = None
    ) -> ChatResponse:
        """Answer ``request`` on the current model, recovering as the policy allows.

        ``request.model`` is replaced by each target's model name, and ``max_tokens``
        (``default_max_tokens`` when unset) is capped by the target's output ceiling.

        Raises:
            LlmError: at once for kinds that are never retried (context overflow, bad
                request, refusal); otherwise one error listing what every model said.
        """
        tracker = DeltaCounter(on_delta) if on_delta is not None else None
        first = await self._try_primary(request, tracker)
        if first is None:
            first = await self._complete(request, tracker)
        escalate = self._settings.escalate_max_tokens and self._settings.enabled
        if first.stop_reason is not StopReason.MAX_TOKENS or not escalate:
            return first
        return await self._escalate(request, first, tracker)

    async def _escalate(
        self, request: ChatRequest, first: ChatResponse, tracker: DeltaCounter | None
    ) -> ChatResponse:
        target = self._chain[self._active]
        sent = self._prepare(request, target).max_tokens or 0
        bigger = escalated_limit(sent, target.limits.max_output_tokens)
        if bigger is None:
            return first
        self._emit(TokensEscalated(model=str(target.ref), from_tokens=sent, to_tokens=bigger))
        on_delta = tracker.inner if tracker is not None else None
        if tracker is not None and tracker.count:
            tracker.inner(StreamReset(reason="asking again with a higher output limit"))
        try:
            wider = request.model_copy(update={"max_tokens": bigger})
            second = await self._complete(wider, on_delta)
        except LlmError as error:
            _log.warning("escalation_failed", model=str(target.ref), error=str(error))
            replay(first, on_delta, reason="keeping the first answer")
            return first
        if second.stop_reason is not StopReason.MAX_TOKENS:
            return second
        if completeness(second) >= completeness(first):
            return second
        replay(first, on_delta, reason="keeping the more complete answer")
        return first

    async def _complete(self, request: ChatRequest, on_delta: DeltaHandler | None) -> ChatResponse:
        call = CallLog()
        order = self._order()
        for position, index in enumerate(order):
            target = self._chain[index]
            others = len(self._chain) > 1
            if self._retry.passes_by(target, call, request.purpose, other_models=others):
                continue
            if index != self._active:
                last = call.failures[-1] if call.failures else None
                reason = last.note if last else "switched"
                kind = last.error.kind if last and last.error else None
                self._switch(index, reason, kind, request.kind)
            later = any(self._retry.skipped_for(self._chain[i]) <= 0 for i in order[position + 1 :])
            sent = self._prepare(request, target)
            response = await self._retry.run(target, sent, on_delta, call, later)
            if response is not None:
                return response
        error = combined_error(call.failures)
        lead = next((f for f in call.failures if f.error is not None), call.failures[0])
        self._emit(
            GaveUp(
                kind=error.kind,
                requests=call.requests,
                waited=call.waited,
                message=error.message,
                retry_after=error.retry_after,
                model=str(lead.ref),
                purpose=request.kind,
            ),
            request_id=error.request_id,
        )
        raise error

    async def _try_primary(
        self, request: ChatRequest, on_delta: DeltaHandler | None
    ) -> ChatResponse | None:
        """At the start of a step, send one trial request to the model the session fell back
        from, when its time has come; its answer, or None to go on with the fallback."""
        detour = self._detour
        if detour is None or request.purpose is not Purpose.FOREGROUND:
            return None
        if not detour.due(self._clock()):
            return None
        home = self._chain[detour.home]
        outcome = await self._retry.trial(home, self._prepare(request, home), on_delta)
        now = self._clock()
        if isinstance(outcome, float):
            detour.trial_postponed(now, outcome)
            return None
        if isinstance(outcome, LlmError):
            detour.trial_failed(now, outcome.kind)
            _log.info(
                "primary_trial_failed",
                model=str(home.ref),
                kind=outcome.kind.value,
                next_trial_in=detour.interval if detour.next_trial is not None else None,
            )
            return None
        fallback = str(self.current)
        self._move(detour.home)
        self._detour = None
        after = now - detour.since
        back = ModelRestored(
            model=str(home.ref), from_model=fallback, after=after, purpose=request.kind
        )
        self._emit(back)
        return outcome

    def _switch(
        self, index: int, reason: str, kind: ErrorKind | None, purpose: RequestKind
    ) -> None:
        before = self._active
        self._move(index)
        now = self._clock()
        if self._detour is None:
            cooldown = self._settings.breaker_cooldown
            self._detour = Detour.start(before, now, reason, kind, cooldown)
        elif index == self._detour.home:
            self._detour = None  # the walk along the chain came back round to it
        detour = self._detour
        event = FallbackActivated(
            from_model=str(self._chain[before].ref),
            to_model=str(self.current),
            reason=reason,
            primary=str(self._chain[detour.home].ref) if detour else "",
            returns_in=None if detour is None or detour.next_trial is None else detour.interval,
            stays_because=detour.stays_because if detour else None,
            purpose=purpose,
        )
        self._emit(event)

    def _move(self, index: int) -> None:
        """Make ``index`` the current model, counting the time spent on the one before."""
        now, before = self._clock(), str(self.current)
        self._time_on[before] = self._time_on.get(before, 0.0) + now - self._on_since
        self._on_since = now
        self._active = index

    def _order(self) -> list[int]:
        """Chain indices from the current model on, then the ones before it."""
        size = len(self._chain)
        return [(self._active + offset) % size for offset in range(size)]

    def _prepare(self, request: ChatRequest, target: ModelTarget) -> ChatRequest:
        wanted = request.max_tokens or self._settings.default_max_tokens
        limit = min(wanted, target.limits.max_output_tokens)
        return request.model_copy(update={"model": target.ref.name, "max_tokens": limit})

    def _emit(self, event: RecoveryEvent, request_id: str | None = None) -> None:
        self._counts[event.type] += 1
        fields = event.model_dump(mode="json")
        fields.setdefault("request_id", request_id)
        _log.info(fields.pop("type"), **fields)
        if self._events is not None:
            self._events(event)
