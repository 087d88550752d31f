"""The tool executor: validates, guards, runs, retries, checkpoints and trims tool calls.

`ToolExecutor.execute` never raises except on cancellation: every failure becomes a
`ToolResultBlock` with ``is_error=True`` that the model can read and act on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel, ValidationError

from agent.llm.conversation import RAW_ARGUMENTS_KEY
from agent.llm.events import Event, EventSink
from agent.llm.messages import ToolResultBlock, ToolUseBlock
from agent.llm.provider import ToolSpec
from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput
from tools.builtin import builtin_tools
from tools.checkpoints import Checkpoint, CheckpointStore, UndoReport
from tools.events import (
    CheckpointRecorded,
    RolledBack,
    ToolFailed,
    ToolRefused,
    ToolRepeatedFailure,
    ToolRetried,
    ToolTimedOut,
    UndoApplied,
)
from tools.hooks import (
    ApprovalGate,
    ApprovalMode,
    Approver,
    BeforeToolHook,
    Refusal,
    SafetyPolicy,
    ToolInvocation,
)
from tools.repeats import RepeatedFailures, change_approach
from tools.results import (
    Failure,
    classify_exception,
    error_text,
    not_json_text,
    rollback_text,
    validation_text,
)
from tools.settings import ToolSettings
from tools.text import trim_middle

log = structlog.get_logger("tools")


class ToolExecutor:
    """Runs the model's tool calls inside the workspace, safely and reversibly.

    Args:
        workspace: The directory tools are confined to.
        settings: Limits (output size, timeouts, retries).
        approval: Which calls need the person's approval.
        approver: Asks the person; None means non-interactive, so calls that need
            approval are refused with a result saying so.
        events: Receives `ToolFailed`, `ToolRetried`, `CheckpointRecorded`, ... events.
        tools: The tools offered (default: the built-in coding tools).
        hooks: Extra ``before_tool`` hooks, run after the safety policy and before approval.
        sleep: Waits between retries (inject a virtual clock's in tests).
        checkpoint_dir: Keep prior file contents there instead of in memory.
        home: The person's home directory for the safety policy (default: ``$HOME``).
    """

    def __init__(
        self,
        *,
        workspace: Path,
        settings: ToolSettings,
        approval: ApprovalMode,
        approver: Approver | None,
        events: EventSink | None = None,
        tools: Sequence[Tool[Any]] | None = None,
        hooks: Sequence[BeforeToolHook] = (),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        checkpoint_dir: Path | None = None,
        home: Path | None = None,
    ) -> None:
        self._workspace = workspace.resolve()
        self._settings = settings
        self._events = events
        self._sleep = sleep
        chosen = builtin_tools() if tools is None else list(tools)
        if settings.enabled is not None:
            chosen = [tool for tool in chosen if tool.name in settings.enabled]
        self._tools: dict[str, Tool[Any]] = {tool.name: tool for tool in chosen}
        self._hooks: list[BeforeToolHook] = [
            SafetyPolicy(home),
            *hooks,
            ApprovalGate(approval, approver),
        ]
        self._store = CheckpointStore(checkpoint_dir)
        self._turn = 0
        self._repeats = RepeatedFailures(
            settings.repeated_failure_warn, settings.repeated_failure_limit
        )

    def specs(self) -> list[ToolSpec]:
        """The offered tools as the model sees them (name, description, JSON schema)."""
        return [
            ToolSpec(
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_model.model_json_schema(),
            )
            for tool in self._tools.values()
        ]

    @property
    def checkpoints(self) -> list[Checkpoint]:
        """Live checkpoints (path, existed_before, turn, tool_use_id), oldest first."""
        return self._store.entries

    @property
    def repeated_failure_stop(self) -> str | None:
        """Set when one call failed identically ``repeated_failure_limit`` times this turn.

        The loop should end the turn with this message.
        """
        return self._repeats.stop_reason

    def begin_turn(self) -> None:
        """Start a new turn: later checkpoints form one `/undo` step; failure counts reset."""
        self._turn += 1
        self._repeats.reset()

    def undo_last_turn(self) -> UndoReport:
        """Restore the files changed in the latest turn that changed any, last in first out."""
        report = self._store.undo_turn()
        if report.turn is not None:
            self._emit(
                UndoApplied(
                    turn=report.turn,
                    restored=[str(p) for p in report.restored],
                    failed=[f"{f.path}: {f.reason}" for f in report.failed],
                )
            )
        return report

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock:
        """Run one tool call and return its result; never raises except on cancellation."""
        try:
            result = await self._execute(call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool or hook must not end the turn
            log.exception("tool_executor_bug", tool=call.name, tool_use_id=call.id)
            result = self._failed(call, classify_exception(exc))
        return result.model_copy(
            update={"content": trim_middle(result.content, self._settings.max_output_chars)}
        )

    async def _execute(self, call: ToolUseBlock) -> ToolResultBlock:
        tool = self._tools.get(call.name)
        if tool is None:
            names = ", ".join(sorted(self._tools))
            failure = Failure(
                f"there is no tool named {call.name!r}",
                ErrorCategory.PERMANENT,
                f"call one of the available tools: {names}",
            )
            return self._failed(call, failure)
        if RAW_ARGUMENTS_KEY in call.input:
            text = not_json_text(tool.name, call.input[RAW_ARGUMENTS_KEY], tool.input_model)
            return self._failed(call, Failure(text, ErrorCategory.PERMANENT), text=text)
        try:
            args = tool.input_model.model_validate(call.input)
        except ValidationError as exc:
            text = validation_text(tool.name, exc, tool.input_model)
            return self._failed(call, Failure(text, ErrorCategory.PERMANENT), text=text)
        ctx = ToolContext(self._workspace, self._settings, lambda p: self._record(p, call.id))
        refusal = await self._check_hooks(ToolInvocation(call, tool, args, ctx))
        if refusal is not None:
            return self._refused(call, refusal)
        return await self._run(call, tool, args, ctx)

    async def _check_hooks(self, invocation: ToolInvocation) -> Refusal | None:
        for hook in self._hooks:
            try:
                refusal = await hook(invocation)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # fail closed: a broken guard must not let a call through
                log.exception("before_tool_hook_failed", tool=invocation.tool.name)
                refusal = Refusal(f"a safety check failed ({exc})", "try another approach")
            if refusal is not None:
                return refusal
        return None

    async def _run(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> ToolResultBlock:
        attempt = 1
        while True:
            outcome = await self._attempt(call, tool, args, ctx)
            if isinstance(outcome, ToolOutput):
                return self._succeeded(call, outcome)
            retryable = outcome.category is ErrorCategory.TRANSIENT and tool.idempotent
            if not retryable or attempt > self._settings.max_retries:
                return self._failed(call, outcome, attempts=attempt)
            delay = self._settings.retry_backoff * 2 ** (attempt - 1)
            self._emit(
                ToolRetried(
                    tool=tool.name,
                    tool_use_id=call.id,
                    attempt=attempt,
                    delay=delay,
                    message=outcome.message,
                )
            )
            await self._sleep(delay)
            attempt += 1

    async def _attempt(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> ToolOutput | Failure:
        timeout = tool.timeout(args, self._settings)
        try:
            return await asyncio.wait_for(tool.run(args, ctx), timeout)
        except ToolError as exc:
            return Failure(exc.message, exc.category, exc.hint)
        except TimeoutError:
            self._emit(ToolTimedOut(tool=tool.name, tool_use_id=call.id, timeout=timeout))
            if tool.idempotent:
                return Failure(f"{tool.name} timed out after {timeout:g}s", ErrorCategory.TRANSIENT)
            return Failure(
                f"{tool.name} timed out after {timeout:g}s; its effect is unknown",
                ErrorCategory.PERMANENT,
                "check the result with read_file or list_files before trying again",
            )
        except Exception as exc:
            log.warning("tool_raised", tool=tool.name, tool_use_id=call.id, exc_info=True)
            return classify_exception(exc)

    def _record(self, path: Path, tool_use_id: str) -> None:
        try:
            checkpoint = self._store.record(path, turn=self._turn, tool_use_id=tool_use_id)
        except OSError as exc:
            raise ToolError(
                f"could not save the current content of {path.name} ({exc.strerror or exc}), "
                "so it was not changed",
                hint="check the file's permissions",
            ) from None
        self._emit(
            CheckpointRecorded(
                path=str(path),
                existed_before=checkpoint.existed_before,
                turn=self._turn,
                tool_use_id=tool_use_id,
            )
        )

    def _succeeded(self, call: ToolUseBlock, output: ToolOutput) -> ToolResultBlock:
        content = output.content
        if output.partial:
            content = f"Partial result (some parts failed, see the end):\n{content}"
        if output.is_error:
            self._emit(
                ToolFailed(
                    tool=call.name,
                    tool_use_id=call.id,
                    category=ErrorCategory.PERMANENT,
                    message=content[-200:],
                )
            )
            content = self._note_repeat(call, content)
        return ToolResultBlock(tool_use_id=call.id, content=content, is_error=output.is_error)

    def _failed(
        self, call: ToolUseBlock, failure: Failure, *, attempts: int = 1, text: str | None = None
    ) -> ToolResultBlock:
        content = text or error_text(failure, attempts=attempts)
        rollback = self._store.roll_back_call(call.id)
        if rollback.restored or rollback.failed:
            content += "\n" + rollback_text(rollback)
            self._emit(
                RolledBack(
                    tool=call.name,
                    tool_use_id=call.id,
                    restored=[str(p) for p in rollback.restored],
                    failed=[f"{f.path}: {f.reason}" for f in rollback.failed],
                )
            )
        log.info(
            "tool_failed",
            tool=call.name,
            tool_use_id=call.id,
            category=str(failure.category),
            message=failure.message[:500],
        )
        self._emit(
            ToolFailed(
                tool=call.name,
                tool_use_id=call.id,
                category=str(failure.category),
                message=failure.message[:200],
            )
        )
        content = self._note_repeat(call, content)
        return ToolResultBlock(tool_use_id=call.id, content=content, is_error=True)

    def _refused(self, call: ToolUseBlock, refusal: Refusal) -> ToolResultBlock:
        self._emit(
            ToolRefused(tool=call.name, tool_use_id=call.id, reason=refusal.reason, by=refusal.by)
        )
        log.info("tool_refused", tool=call.name, tool_use_id=call.id, by=refusal.by)
        content = f"Refused: {refusal.reason}"
        if refusal.hint:
            content += f"\nInstead: {refusal.hint}."
        content = self._note_repeat(call, content)
        return ToolResultBlock(tool_use_id=call.id, content=content, is_error=True)

    def _note_repeat(self, call: ToolUseBlock, content: str) -> str:
        count = self._repeats.count(call)
        if not self._repeats.should_warn(count):
            return content
        limit_reached = self._repeats.limit_reached(count)
        self._emit(ToolRepeatedFailure(tool=call.name, count=count, limit_reached=limit_reached))
        return f"{content}\n{change_approach(count)}"

    def _emit(self, event: Event) -> None:
        if self._events is not None:
            self._events(event)
