"""Turn-level recovery: continue truncated answers and compact an overflowing context.

This is the loop's side of DESIGN §5: it changes the conversation (a continuation prompt, a
compacted view), never retries a request — the recovering provider has already done that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from agent.engine.outcome import PromptTooLong
from compaction import CompactionFailed, Compactor, Reason
from providers import ChatResponse, Event, EventSink, LlmError, Message, TextBlock, ToolSpec

CONTINUE_PROMPT = (
    "Your previous response was cut off by the output limit. Resume directly from where it "
    "stopped, mid-sentence if need be: no apology, no recap. If much remains, split the "
    "remaining work into smaller steps."
)
CONTINUE_AFTER_TOOL_CUT = (
    "Your previous response was cut off while writing a tool call, so that call was dropped "
    "and did not run. Make smaller steps: split large file writes into several edit_file "
    "calls, and keep each tool call's input short."
)


class ContinuationRequested(Event):
    """A truncated answer is being continued with a prompt."""

    type: Literal["continuation_requested"] = "continuation_requested"
    attempt: int
    limit: int
    dropped_tool_call: bool = False

    def describe(self) -> str:
        cut = " (a cut-off tool call was dropped)" if self.dropped_tool_call else ""
        return f"Answer cut off — asking the model to continue ({self.attempt}/{self.limit}){cut}"


class ContinuationExhausted(Event):
    """A turn's answer was still truncated after every continuation."""

    type: Literal["continuation_exhausted"] = "continuation_exhausted"
    limit: int

    def describe(self) -> str:
        return f"Answer still cut off after {self.limit} continuations; keeping what was written"


class CompactionLog(Protocol):
    """Where a compacted view is recorded (the session)."""

    def append_compaction(self, messages: list[Message], stats: dict[str, object]) -> None: ...


class TurnRecoveryPolicy:
    """Implements the loop's `TurnRecovery` with a `Compactor` and a continuation budget.

    Args:
        compactor: Decides how to shrink the conversation (it reads the current limits).
        log: Records each compacted view so a resume rebuilds it.
        events: Receives continuation events.
        max_continuations: Continuation prompts allowed per turn.
        model: The current model's name, for messages to the person.
    """

    def __init__(
        self,
        *,
        compactor: Compactor,
        log: CompactionLog,
        events: EventSink | None = None,
        max_continuations: int = 3,
        model: Callable[[], str] = lambda: "the model",
    ) -> None:
        self.model = model
        self.compactor = compactor
        self.log = log
        self.events: EventSink = events or (lambda event: None)
        self.max_continuations = max_continuations
        self.continuations = 0
        self._prompt_at: tuple[int, Message | None] = (0, None)
        """Where the latest prompt was found for the last request (`_latest_prompt`)."""
        self._prompt_text: tuple[Message | None, object, int] = (None, None, 0)
        """That prompt, the counter that estimated its text, and the estimate."""

    def start_turn(self) -> None:
        self.continuations = 0

    async def before_request(
        self, messages: list[Message], *, system: str, tools: Sequence[ToolSpec]
    ) -> list[Message]:
        prompt = self._prompt_tokens(messages, system, tools)
        if prompt > self.compactor.limits.context_window:
            raise self._too_long(prompt)
        compacted = await self.compactor.before_request(messages, system=system, tools=tools)
        self._record(messages, compacted, "proactive")
        return compacted

    async def on_overflow(
        self,
        messages: list[Message],
        error: LlmError,
        *,
        system: str,
        tools: Sequence[ToolSpec],
    ) -> list[Message] | None:
        smaller = await self.compactor.on_overflow(messages, system=system, tools=tools)
        if smaller is not None:
            self._record(messages, smaller, "reactive")
            return smaller
        prompt = self._prompt_tokens(messages, system, tools)
        if 2 * prompt > self.compactor.tokens(messages, system=system, tools=tools):
            raise self._too_long(prompt, rejected=True)
        self.events(
            CompactionFailed(stage=None, reason=Reason.REACTIVE, error="nothing left to compact")
        )
        return None

    def _prompt_tokens(
        self, messages: Sequence[Message], system: str, tools: Sequence[ToolSpec]
    ) -> int:
        """Estimated tokens of the latest user text, with the system prompt and tools it
        cannot go without; tool results are left out, compaction can shrink those."""
        latest = self._latest_prompt(messages)
        if latest is None:
            return 0
        counter = self.compactor.counter
        if self._prompt_text[:2] != (latest, counter):
            blocks = [b for b in latest.content if isinstance(b, TextBlock)]
            tokens = counter.estimate_message(Message(role="user", content=blocks))
            self._prompt_text = (latest, counter, tokens)
        return self._prompt_text[2] + counter.estimate_overhead(system, tools)

    def _latest_prompt(self, messages: Sequence[Message]) -> Message | None:
        """The last user message with text. Steps only add messages after it: the search
        starts from the end and stops at the one found for the last request, if it is
        still where it was."""
        index, found = self._prompt_at
        known = found is not None and index < len(messages) and messages[index] is found
        for at in range(len(messages) - 1, index if known else -1, -1):
            message = messages[at]
            if message.role == "user" and message.text:
                self._prompt_at = (at, message)
                return message
        return found if known else None

    def _too_long(self, prompt_tokens: int, *, rejected: bool = False) -> PromptTooLong:
        window = self.compactor.limits.context_window
        return PromptTooLong(
            model=self.model(), window=window, prompt_tokens=prompt_tokens, rejected=rejected
        )

    async def compact(
        self, messages: list[Message], *, focus: str | None, system: str, tools: Sequence[ToolSpec]
    ) -> list[Message]:
        """``/compact [focus]``: summarise now; returns the new view (unchanged on failure)."""
        result = await self.compactor.compact(messages, focus=focus, system=system, tools=tools)
        self._record(messages, result.messages, "manual")
        return result.messages

    def on_truncated(self, response: ChatResponse, dropped_tool_call: bool) -> Message | None:
        if self.continuations >= self.max_continuations:
            self.events(ContinuationExhausted(limit=self.max_continuations))
            return None
        self.continuations += 1
        self.events(
            ContinuationRequested(
                attempt=self.continuations,
                limit=self.max_continuations,
                dropped_tool_call=dropped_tool_call,
            )
        )
        return Message.user(CONTINUE_AFTER_TOOL_CUT if dropped_tool_call else CONTINUE_PROMPT)

    def observe(self, response: ChatResponse, messages: list[Message]) -> None:
        self.compactor.observe(messages, response)

    def _record(self, before: list[Message], after: list[Message], reason: str) -> None:
        if after is before or after == before:
            return
        self.log.append_compaction(
            list(after),
            {"reason": reason, "messages_before": len(before), "messages_after": len(after)},
        )
