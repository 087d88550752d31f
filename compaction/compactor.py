"""The `Compactor`: runs the stages in order for the loop, and keeps the breaker.

The loop decides *when* (before a request, after an overflow, on ``/compact``); the compactor
decides *how*. It never mutates the list it is given: the session log keeps the full history,
the loop swaps in the returned view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from compaction.events import (
    CompactionApplied,
    CompactionDisabled,
    CompactionFailed,
    CompactionStarted,
    Reason,
)
from compaction.settings import CompactionSettings
from compaction.stages import (
    Stage,
    choose_cut,
    drop_old_images,
    drop_oldest_turns,
    snip_tool_results,
    trim_unread_results,
)
from compaction.summary import Summariser, SummaryFailed
from compaction.tokens import ContextBudget, TokenCounter
from providers import ChatResponse, EventSink, Message, Provider, ToolSpec
from providers.models import ModelLimits

log = structlog.get_logger("compaction")

STAGES = (Stage.IMAGES, Stage.SNIP, Stage.SUMMARISE, Stage.DROP)
REACTIVE_STAGES = (*STAGES, Stage.TRIM)
"""After an overflow, results the model has not read yet are shortened too, last."""

# Room for the summary request's own instructions and framing.
SUMMARY_PROMPT_TOKENS = 1_000


@dataclass(frozen=True)
class CompactionResult:
    """What one compaction run produced.

    Attributes:
        messages: The new conversation (the input itself when nothing changed).
        reason: What asked for compaction.
        applied: Stages that changed the conversation, in order.
        failed: Stages that failed (the summariser's errors, say).
        tried: Stages that ran, whether they changed anything or not.
        tokens_before: Tokens of the conversation before.
        tokens_after: Tokens of ``messages``.
    """

    messages: list[Message]
    reason: Reason
    applied: tuple[Stage, ...] = ()
    failed: tuple[Stage, ...] = ()
    tried: tuple[Stage, ...] = ()
    tokens_before: int = 0
    tokens_after: int = 0

    @property
    def changed(self) -> bool:
        """Whether any stage changed the conversation."""
        return bool(self.applied)


class Compactor:
    """Compacts a conversation proactively, reactively or on request.

    Args:
        provider: Writes summaries; pass the recovering provider.
        limits: Context window and output ceiling of the current model, or what gives them:
            asked each time they are needed (they change when the chain falls back).
        settings: The ``compaction:`` configuration.
        events: Receives `CompactionStarted`, `CompactionApplied`, `CompactionFailed`,
            `CompactionDisabled`.
        counter: Token accounting; one is made from ``settings`` if not given.
    """

    def __init__(
        self,
        provider: Provider,
        limits: ModelLimits | Callable[[], ModelLimits],
        settings: CompactionSettings | None = None,
        *,
        events: EventSink | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.provider = provider
        self.settings = settings or CompactionSettings()
        self._limits = limits
        self.events: EventSink = events or (lambda event: None)
        self.counter = counter or TokenCounter(self.settings.chars_per_token)
        self.failures = 0
        self._next_reactive = 0

    @property
    def limits(self) -> ModelLimits:
        """The current model's context window and output ceiling."""
        return self._limits() if callable(self._limits) else self._limits

    @property
    def budget(self) -> ContextBudget:
        """Threshold and target, in tokens, for the current limits."""
        return ContextBudget.of(self.limits, self.settings)

    @property
    def disabled(self) -> bool:
        """Whether the breaker has turned proactive compaction off."""
        return self.failures >= self.settings.breaker_failures

    def observe(self, messages: Sequence[Message], response: ChatResponse) -> None:
        """Learn from a successful response to a request that carried ``messages``.

        Calibrates token accounting with the response's usage and ends any overflow episode,
        so the next overflow starts again from the first stage.
        """
        self.counter.observe([*messages, response.message], response.usage)
        self._next_reactive = 0

    def tokens(
        self, messages: Sequence[Message], *, system: str = "", tools: Sequence[ToolSpec] = ()
    ) -> int:
        """Tokens a request with these messages, system prompt and tools would take."""
        return self.counter.count(messages, system=system, tools=tools)

    def should_compact(
        self, messages: Sequence[Message], *, system: str = "", tools: Sequence[ToolSpec] = ()
    ) -> bool:
        """Whether proactive compaction is on and the conversation is over the threshold."""
        if not self.settings.proactive or self.disabled:
            return False
        return self.tokens(messages, system=system, tools=tools) > self.budget.threshold

    async def before_request(
        self, messages: Sequence[Message], *, system: str = "", tools: Sequence[ToolSpec] = ()
    ) -> list[Message]:
        """The messages to send: compacted when over the threshold, else as they are."""
        if not self.should_compact(messages, system=system, tools=tools):
            return list(messages)
        result = await self.run(messages, STAGES, Reason.PROACTIVE, system=system, tools=tools)
        if result.failed or result.tokens_after > self.budget.threshold:
            self.failures += 1
            if self.disabled:
                log.warning("compaction_disabled", failures=self.failures)
                self.events(CompactionDisabled(failures=self.failures))
        else:
            self.failures = 0
        return result.messages

    async def on_overflow(
        self, messages: Sequence[Message], *, system: str = "", tools: Sequence[ToolSpec] = ()
    ) -> list[Message] | None:
        """A smaller conversation to retry with after an overflow, or None when out of stages.

        Each call runs the next stage that changes something (snip, then summarise, then
        drop, then trim the results the model has not read); a stage that fails or has
        nothing to do is passed over. On None the caller says why the turn cannot go on (a
        prompt too long for the model is not a compaction failure, and must not read as one).
        """
        remaining = REACTIVE_STAGES[self._next_reactive :]
        if remaining:
            result = await self.run(
                messages, remaining, Reason.REACTIVE, system=system, tools=tools, one_stage=True
            )
            self._next_reactive += len(result.tried)
            if result.changed:
                return result.messages
        return None

    async def compact(
        self,
        messages: Sequence[Message],
        *,
        focus: str | None = None,
        system: str = "",
        tools: Sequence[ToolSpec] = (),
    ) -> CompactionResult:
        """Summarise all but the latest exchange, on the person's request (``/compact``).

        A success turns proactive compaction back on if the breaker had turned it off.
        """
        result = await self.run(
            messages, (Stage.SUMMARISE,), Reason.MANUAL, focus=focus, system=system, tools=tools
        )
        if result.changed:
            self.failures = 0
        elif not result.failed:
            self.events(
                CompactionFailed(stage=None, reason=Reason.MANUAL, error="nothing to compact yet")
            )
        return result

    async def run(
        self,
        messages: Sequence[Message],
        stages: Sequence[Stage],
        reason: Reason,
        *,
        focus: str | None = None,
        system: str = "",
        tools: Sequence[ToolSpec] = (),
        one_stage: bool = False,
    ) -> CompactionResult:
        """Run ``stages`` in order until the conversation is under its target.

        With ``one_stage``, stop after the first stage that changes the conversation. A stage
        whose result is not smaller than its input is discarded as failed: compaction never
        grows the context.

        Reactive runs aim at half the current size at most: the provider has just said the
        conversation is too big, whatever the estimate says.
        """
        before = self.tokens(messages, system=system, tools=tools)
        target = self._target(reason, before)
        self.events(
            CompactionStarted(reason=reason, tokens_before=before, messages_before=len(messages))
        )
        room = max(0, target - self.counter.estimate_overhead(system, tools))
        current, tokens = list(messages), before
        applied: list[Stage] = []
        failed: list[Stage] = []
        tried: list[Stage] = []
        for stage in stages:
            if tokens <= target or (one_stage and applied):
                break
            tried.append(stage)
            try:
                new = await self._stage(stage, current, room, focus)
            except SummaryFailed as error:
                log.warning("compaction_stage_failed", stage=stage.value, error=str(error))
                self.events(CompactionFailed(stage=stage, reason=reason, error=str(error)))
                failed.append(stage)
                continue
            if new == current:
                continue
            if not self._shrinks(current, new):
                # A summary longer than the turns it replaces (a small model's template, a
                # short head) would grow the context: discard it, the next stage will do.
                why = (
                    f"its result (~{self.counter.estimate(new):,} tokens) was not smaller than "
                    f"what it would replace (~{self.counter.estimate(current):,} tokens), so "
                    "the conversation was kept as it was"
                )
                log.warning("compaction_stage_discarded", stage=stage.value, error=why)
                self.events(CompactionFailed(stage=stage, reason=reason, error=why))
                failed.append(stage)
                continue
            after = self._after(tokens, current, new, system, tools)
            self.events(_applied(stage, reason, current, new, tokens, after))
            current, tokens = new, after
            applied.append(stage)
        return CompactionResult(
            messages=current,
            reason=reason,
            applied=tuple(applied),
            failed=tuple(failed),
            tried=tuple(tried),
            tokens_before=before,
            tokens_after=tokens,
        )

    def _shrinks(self, before: Sequence[Message], after: Sequence[Message]) -> bool:
        """Whether ``after`` is smaller than ``before``.

        Both are estimated the same way: the calibrated count of ``before`` against an
        estimate of ``after`` would compare the provider's tokenizer with ours.
        """
        return self.counter.estimate(after) < self.counter.estimate(before)

    def _after(
        self,
        tokens: int,
        current: Sequence[Message],
        new: Sequence[Message],
        system: str,
        tools: Sequence[ToolSpec],
    ) -> int:
        """Tokens of ``new``, on the scale of ``tokens`` (those of ``current``).

        ``tokens`` may be the provider's own figure while ``new`` can only be estimated; a
        tokenizer that counts fewer tokens than the estimate would make a smaller
        conversation look larger ("833 → 947"). Then the provider's figure is scaled by how
        much the estimate shrank, which `_shrinks` has checked.
        """
        after = self.tokens(new, system=system, tools=tools)
        if after < tokens:
            return after
        ratio = self.counter.estimate(new) / max(1, self.counter.estimate(current))
        return max(0, min(tokens - 1, round(tokens * ratio)))

    def _target(self, reason: Reason, tokens: int) -> int:
        if reason is Reason.REACTIVE:
            return min(self.budget.target, tokens // 2)
        if reason is Reason.MANUAL:
            return 0  # summarise all that can be summarised
        return self.budget.target

    async def _stage(
        self, stage: Stage, messages: list[Message], target: int, focus: str | None
    ) -> list[Message]:
        estimate = self.counter.estimate
        if stage is Stage.IMAGES:
            return drop_old_images(messages)
        if stage is Stage.SNIP:
            return snip_tool_results(messages, self.settings.keep_last_tool_results)
        if stage is Stage.DROP:
            return drop_oldest_turns(messages, target, estimate)
        if stage is Stage.TRIM:
            return trim_unread_results(messages, target, estimate, self.settings.chars_per_token)
        summariser = self._summariser()
        k = choose_cut(messages, max(0, target - summariser.max_summary_tokens), estimate)
        if k is None:
            return messages
        return await summariser.compact(messages, k, focus)

    def _summariser(self) -> Summariser:
        limits = self.limits
        max_tokens = min(self.settings.max_summary_tokens, limits.max_output_tokens)
        room = limits.context_window - max_tokens - SUMMARY_PROMPT_TOKENS
        # 10% slack: the estimate is rough, and this request must not overflow in turn.
        chars = int(max(1_000, room) * self.settings.chars_per_token * 0.9)
        return Summariser(self.provider, max_summary_tokens=max_tokens, max_transcript_chars=chars)


def _applied(
    stage: Stage,
    reason: Reason,
    before: Sequence[Message],
    after: Sequence[Message],
    tokens_before: int,
    tokens_after: int,
) -> CompactionApplied:
    return CompactionApplied(
        stage=stage,
        reason=reason,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        messages_before=len(before),
        messages_after=len(after),
    )
