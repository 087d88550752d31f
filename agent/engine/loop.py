"""The TAOR loop: think → act → observe → repeat, until a final answer or a limit.

The loop owns what changes the conversation (appending messages, tool results, continuation
prompts, compaction); it never retries a request — that is the recovering provider's job.
Everything it needs arrives through the constructor, so it runs the same in the REPL, under
``-p`` and in tests with a scripted provider.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import structlog

from agent.engine.explain import explain
from agent.engine.face import Face
from agent.engine.instructions import NearestInstructions
from agent.engine.outcome import PromptTooLong, TurnEnded, TurnResult, TurnStatus
from agent.engine.ports import ToolRunner, Transcript, TurnRecovery, _NoTranscript
from agent.engine.tool_ids import ToolCallIds
from providers import (
    ChatRequest,
    ChatResponse,
    DeltaHandler,
    ErrorKind,
    EventSink,
    ImageBlock,
    LlmError,
    Message,
    Provider,
    RequestKind,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from providers.conversation import (
    EMPTY_REPLY,
    answer_dangling_calls,
    interrupted_result,
    merge_consecutive,
    non_empty_reply,
)

log = structlog.get_logger("agent.engine.loop")

INTERRUPTED_REASON = "the turn was stopped"
EMPTY_ANSWER = EMPTY_REPLY


class AgentLoop:
    """Runs turns of a conversation against a provider with tools.

    Args:
        provider: Usually a `recovery.RecoveringProvider`.
        tools: The tool executor.
        system: The system prompt.
        history: The conversation so far (the compacted view when resuming).
        transcript: Persists every message before the loop moves on.
        events: Receives the loop's events.
        face: Hears streamed output, each message added and each tool result (`Face`).
        instructions: Adds a subdirectory's AGENTS.md to the first result working there.
        recovery: Turn-level recovery (continuation, compaction); optional.
        max_steps: Model calls allowed per turn, or what gives them: it is asked at the start
            of each turn (the budget depends on the current model).
        turn_timeout: Wall-clock seconds a turn may run before it stops (None: no limit).
        clock: Monotonic time, injected for tests.
        max_tokens: Output tokens to ask for per call (None: the provider's choice).
        tool_ids: Tool-call ids the session already used (default: those in ``history``);
            a repeated id in a new answer is renamed before it is recorded or run.
        tool_news: Given the tools a request offers, what the model should hear about
            them (an MCP server still starting, or whose tools just joined); the note goes
            with the request's last user message.
        together: Whether a call may run at the same time as the calls next to it that may
            too (sub-agents' `task` calls); every other call runs alone, in order.
        kind: What the requests are for (a sub-agent's are counted apart).
        settled: The result a call stopped part way left (a sub-agent's: what it did), used
            instead of the plain "interrupted" one when the turn is stopped.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        tools: ToolRunner,
        system: str,
        history: Sequence[Message] = (),
        transcript: Transcript | None = None,
        events: EventSink | None = None,
        face: Face | None = None,
        instructions: NearestInstructions | None = None,
        recovery: TurnRecovery | None = None,
        max_steps: int | Callable[[], int] = 50,
        max_tokens: int | None = None,
        turn_timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        tool_ids: ToolCallIds | None = None,
        tool_news: Callable[[Sequence[ToolSpec]], str | None] | None = None,
        together: Callable[[ToolUseBlock], bool] = lambda call: False,
        kind: RequestKind = RequestKind.TURN,
        settled: Callable[[str], ToolResultBlock | None] = lambda call_id: None,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.system = system
        self.messages: list[Message] = list(history)
        self.transcript: Transcript = transcript or _NoTranscript()
        self.events = events or (lambda event: None)
        self.face = face
        self.instructions = instructions
        self.on_delta: DeltaHandler | None = face.on_delta if face is not None else None
        self.recovery = recovery
        self._max_steps = max_steps
        self.max_tokens = max_tokens
        self.turn_timeout = turn_timeout
        self.clock = clock
        self.usage = Usage()
        self.api_seconds = 0.0
        """Time spent waiting for the model (retries and waits included)."""
        self.tool_ids = tool_ids if tool_ids is not None else ToolCallIds.of(self.messages)
        self.tool_news = tool_news
        self.together = together
        self.kind = kind
        self.settled = settled

    @property
    def max_steps(self) -> int:
        """Model calls allowed in a turn that starts now."""
        return self._max_steps() if callable(self._max_steps) else self._max_steps

    def _append(self, message: Message) -> None:
        self.transcript.append_message(message)
        self.messages.append(message)
        if self.face is not None:
            self.face.on_message(message)

    def _add_prompt(self, prompt: str, images: Sequence[ImageBlock]) -> None:
        """Persist ``prompt`` (its images first); in the view it joins a user message still
        waiting for an answer (the results of an interrupted turn), so one request has both."""
        message = Message(role="user", content=[*images, TextBlock(text=prompt)])
        self.transcript.append_message(message)
        self.messages = merge_consecutive([*self.messages, message])
        if self.face is not None:
            self.face.on_message(message)

    def add_context(self, message: Message) -> None:
        """Persist ``message`` (what the person did between turns: a ``!command`` run) now; the
        next request carries it, in one user message with the next prompt."""
        self.transcript.append_message(message)
        self.messages = merge_consecutive([*self.messages, message])

    def annotate_last_user_message(self, note: str) -> None:
        """Add ``note`` to the pending user message of the view (not to the session log)."""
        if self.messages and self.messages[-1].role == "user":
            last = self.messages[-1]
            self.messages[-1] = Message(role="user", content=[*last.content, TextBlock(text=note)])

    def replace_history(self, messages: Sequence[Message]) -> None:
        """Swap the working view (after compaction or `/clear`); the session log keeps all."""
        self.messages = list(messages)

    async def run_turn(self, prompt: str | None, images: Sequence[ImageBlock] = ()) -> TurnResult:
        """Run one turn. ``prompt`` None answers a conversation that already ends on the user;
        ``images`` go with the prompt.

        Never raises for model or tool failures (they end the turn as `FAILED`); cancellation
        leaves the conversation consistent and re-raises.
        """
        self.tools.begin_turn()
        if self.recovery is not None:
            self.recovery.start_turn()
        if prompt is not None:
            with self.transcript.group_commit():  # durable with the first step, not before it
                self._add_prompt(prompt, images)
        result = TurnResult(status=TurnStatus.FAILED)
        try:
            result = await self._steps()
        except LlmError as error:
            log.warning("turn_failed", kind=error.kind.value, error=str(error))
            result = TurnResult(
                status=TurnStatus.FAILED,
                error=explain(error),
                error_kind=error.kind,
                retry_after=error.retry_after,
            )
        except PromptTooLong as error:
            log.warning("prompt_too_long", window=error.window, tokens=error.prompt_tokens)
            result = TurnResult(
                status=TurnStatus.FAILED, error=str(error), error_kind=ErrorKind.CONTEXT_OVERFLOW
            )
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._close_dangling_calls()
            self.events(TurnEnded(status=TurnStatus.INTERRUPTED, steps=result.steps))
            raise
        result.usage = self.usage
        with self.transcript.group_commit():
            self.events(TurnEnded(status=result.status, steps=result.steps, error=result.error))
        return result

    async def _steps(self) -> TurnResult:
        answer: list[str] = []
        started = self.clock()
        max_steps = self.max_steps
        for step in range(1, max_steps + 1):
            if self.turn_timeout is not None and self.clock() - started > self.turn_timeout:
                return TurnResult(
                    status=TurnStatus.FAILED,
                    answer="".join(answer),
                    error=f"Stopped after {self.turn_timeout:g}s (turn_timeout). "
                    "Continue with a new prompt.",
                    steps=step - 1,
                )
            with self.transcript.group_commit():
                raw = await self._request()
                response = _drop_incomplete_calls(raw)
                dropped = response is not raw
                answer.append(response.message.text)
                message = self.tool_ids.assign(non_empty_reply(response.message))
                self._append(message)
                calls = message.tool_uses
                if calls:
                    await self._run_tools(calls)
                    answer.clear()
                    stop = self.tools.repeated_call_stop
                    if stop is not None:
                        return TurnResult(status=TurnStatus.REPEATED_CALL, error=stop, steps=step)
                    continue
                if response.stop_reason in (StopReason.MAX_TOKENS, StopReason.CONTEXT_WINDOW):
                    continuation = (
                        self.recovery.on_truncated(response, dropped) if self.recovery else None
                    )
                    if continuation is not None:
                        self._append(continuation)
                        continue
                if response.stop_reason is StopReason.REFUSAL:
                    return TurnResult(
                        status=TurnStatus.FAILED,
                        answer="".join(answer),
                        error="The model declined; rephrase the request or try another model.",
                        error_kind=ErrorKind.REFUSAL,
                        steps=step,
                    )
                return TurnResult(status=TurnStatus.DONE, answer="".join(answer), steps=step)
        return TurnResult(
            status=TurnStatus.MAX_STEPS,
            answer="".join(answer),
            error=f"Stopped after {max_steps} steps (max_steps). Continue with a new prompt.",
            steps=max_steps,
        )

    async def _request(self) -> ChatResponse:
        specs = self.tools.specs()
        if self.recovery is not None:
            self.messages = await self.recovery.before_request(
                self.messages, system=self.system, tools=specs
            )
        if self.tool_news is not None and (news := self.tool_news(specs)):
            self.annotate_last_user_message(news)
        while True:
            request = ChatRequest(
                system=self.system,
                messages=self.messages,
                tools=specs,
                max_tokens=self.max_tokens,
                kind=self.kind,
            )
            sent = self.clock()
            try:
                response = await self.provider.chat(request, self.on_delta)
            except LlmError as error:
                self.api_seconds += self.clock() - sent
                if error.kind is not ErrorKind.CONTEXT_OVERFLOW or self.recovery is None:
                    raise
                smaller = await self.recovery.on_overflow(
                    self.messages, error, system=self.system, tools=specs
                )
                if smaller is None:
                    raise
                self.messages = smaller
                continue
            self.api_seconds += self.clock() - sent
            self.usage = self.usage + response.usage
            if self.recovery is not None:
                self.recovery.observe(response, self.messages)
            return response

    async def _run_tools(self, calls: list[ToolUseBlock]) -> None:
        results: list[ToolResultBlock] = []
        try:
            for group in _groups(calls, self.together):
                for call, result in await self._run_group(group, results):
                    if self.instructions is not None:
                        result = self.instructions.annotate(call, result)
                    results.append(result)
                    if self.face is not None:
                        self.face.on_tool_result(call, result)
        finally:
            done = {result.tool_use_id for result in results}
            results += [
                self.settled(call.id) or interrupted_result(call, INTERRUPTED_REASON)
                for call in calls
                if call.id not in done
            ]
            self._append(Message(role="user", content=list(results)))

    async def _run_group(
        self, group: list[ToolUseBlock], results: list[ToolResultBlock]
    ) -> list[tuple[ToolUseBlock, ToolResultBlock]]:
        """Run ``group`` (one call, or calls that may run together) and pair each call with
        its result. When cancelled, the calls that finished keep their results (in
        ``results``) and the others are cancelled before this returns."""
        if len(group) == 1:
            return [(group[0], await self.tools.execute(group[0]))]
        running = [asyncio.ensure_future(self.tools.execute(call)) for call in group]
        try:
            answers = await asyncio.gather(*running)
        except BaseException:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            results += [
                task.result()
                for task in running
                if task.done() and not task.cancelled() and task.exception() is None
            ]
            raise
        return list(zip(group, answers, strict=True))

    def _close_dangling_calls(self) -> None:
        """After an interruption, give every unanswered tool call a result."""
        answered = answer_dangling_calls(self.messages, INTERRUPTED_REASON)
        for message in answered[len(self.messages) :]:
            self._append(message)


def _groups(
    calls: list[ToolUseBlock], together: Callable[[ToolUseBlock], bool]
) -> list[list[ToolUseBlock]]:
    """``calls`` in order, neighbours that may run together in one group."""
    groups: list[list[ToolUseBlock]] = []
    for call in calls:
        if groups and together(call) and together(groups[-1][-1]):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


def _drop_incomplete_calls(response: ChatResponse) -> ChatResponse:
    """A tool call cut off mid-JSON cannot be run: keep the text, drop the call."""
    if response.stop_reason not in (StopReason.MAX_TOKENS, StopReason.CONTEXT_WINDOW):
        return response
    kept = [b for b in response.message.content if not isinstance(b, ToolUseBlock)]
    if len(kept) == len(response.message.content):
        return response
    if not kept:
        kept = [TextBlock(text="(output cut off while writing a tool call)")]
    message = Message(role="assistant", content=kept)
    return response.model_copy(update={"message": message})
