"""`RecoveringProvider`: a `Provider` that retries, budgets, fails over and escalates.

Within one `chat` call it walks the model chain from the session's current model: each
model gets requests until `recovery.policy.decide` says to retry no more, then the next
model takes over (a sticky, announced switch). Everything it does is an event.
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
    EventSink,
    LlmError,
    StopReason,
    StreamReset,
)
from providers.models import ModelRef
from recovery.escalation import completeness, escalated_limit, replay
from recovery.events import (
    FallbackActivated,
    GaveUp,
    RecoveryEvent,
    TokensEscalated,
)
from recovery.fleet import Fleet, FleetView
from recovery.report import combined_error
from recovery.retry import CallLog, DeltaCounter, ModelTarget, RetryLoop
from recovery.settings import RecoverySettings

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
                self._active = index
                return
        if not isinstance(target, ModelTarget):
            chain = ", ".join(str(t.ref) for t in self._chain)
            raise ValueError(f"model {ref} is not in the model chain ({chain})")
        self._chain.append(target)
        self._active = len(self._chain) - 1

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
        )

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
        first = await self._complete(request, tracker)
        if first.stop_reason is not StopReason.MAX_TOKENS or not self._settings.escalate_max_tokens:
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
                reason = call.failures[-1].note if call.failures else "switched"
                self._switch(index, reason)
            later = any(self._retry.skipped_for(self._chain[i]) <= 0 for i in order[position + 1 :])
            sent = self._prepare(request, target)
            response = await self._retry.run(target, sent, on_delta, call, later)
            if response is not None:
                return response
        error = combined_error(call.failures)
        self._emit(
            GaveUp(
                kind=error.kind,
                requests=call.requests,
                waited=call.waited,
                message=error.message,
                retry_after=error.retry_after,
            ),
            request_id=error.request_id,
        )
        raise error

    def _switch(self, index: int, reason: str) -> None:
        before = self._chain[self._active].ref
        self._active = index
        self._emit(
            FallbackActivated(from_model=str(before), to_model=str(self.current), reason=reason)
        )

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
