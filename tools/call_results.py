"""How a tool call's outcome becomes the result the model reads.

Each result is cut once to the output limit (and redacted again, for a key the cut forms),
carries a note when the same call keeps coming back, and a failed call's result says which
of its changes were rolled back. Failures, refusals and repeats are told as events too.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from providers.events import Event
from providers.messages import ToolResultBlock, ToolUseBlock
from tools.attempts import Attempts
from tools.base import ErrorCategory, ToolOutput
from tools.events import ToolFailed, ToolRefused, ToolRepeatedCall, ToolRepeatedFailure
from tools.hooks import Refusal
from tools.repeats import RepeatedCalls, RepeatLimits, repeat_note
from tools.results import Failure, error_text, rollback_text, rolled_back
from tools.settings import ToolSettings
from tools.text import trim_middle
from tools.undo.checkpoints import CheckpointStore
from tools.undo.report import UndoReport

log = structlog.get_logger("tools")


class CallResults:
    """The results of calls made under one set of settings; the executor makes another when
    the settings change, and the counts of repeated calls start again.

    Args:
        settings: The output limit and the repeated-call limits.
        attempts: The calls' attempts (it redacts a failure the way a tool's output is).
        store: The checkpoints, to roll back what a failed call changed.
        redact: Hides secrets.
        emit: Reports an event.
    """

    def __init__(
        self,
        settings: ToolSettings,
        attempts: Attempts,
        store: CheckpointStore,
        redact: Callable[[str], str],
        emit: Callable[[Event], None],
    ) -> None:
        self._settings = settings
        self._attempts = attempts
        self._store = store
        self._redact = redact
        self._emit = emit
        self.repeats = RepeatedCalls(
            failures=RepeatLimits(settings.repeated_failure_warn, settings.repeated_failure_limit),
            successes=RepeatLimits(settings.repeated_call_warn, settings.repeated_call_limit),
        )

    def succeeded(self, call: ToolUseBlock, output: ToolOutput) -> ToolResultBlock:
        """The result of a tool that returned ``output`` (which may itself be an error)."""
        content = self._fit(output.content, output)
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
        else:
            content = self._note_repeat(call, content, result=content)
        return output.result(call.id, content)

    def failed(
        self,
        call: ToolUseBlock,
        failure: Failure,
        *,
        attempts: int = 1,
        text: str | None = None,
        call_number: int | None = None,
    ) -> ToolResultBlock:
        """The result of a call that failed after ``attempts`` (``text``: said as it is);
        what the call ``call_number`` changed is rolled back first."""
        failure = self._attempts.redacted(failure)
        content = self._fit(self._redact(text) if text else error_text(failure, attempts=attempts))
        rollback = (
            self._store.roll_back_call(call_number) if call_number is not None else UndoReport(None)
        )
        if rollback.restored or rollback.failed:
            content += "\n" + rollback_text(rollback)
            self._emit(rolled_back(call, rollback))
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

    def refused(self, call: ToolUseBlock, refusal: Refusal) -> ToolResultBlock:
        """The result of a call the policy, the approval or a hook refused."""
        refusal = Refusal(self._redact(refusal.reason), self._redact(refusal.hint), refusal.by)
        self._emit(
            ToolRefused(tool=call.name, tool_use_id=call.id, reason=refusal.reason, by=refusal.by)
        )
        log.info("tool_refused", tool=call.name, tool_use_id=call.id, by=refusal.by)
        content = f"Refused: {refusal.reason}"
        if refusal.hint:
            content += f"\nInstead: {refusal.hint}."
        content = self._note_repeat(call, self._fit(content))
        return ToolResultBlock(tool_use_id=call.id, content=content, is_error=True)

    def _fit(self, content: str, output: ToolOutput | None = None) -> str:
        """Cut once to the limit, with the tool's gap; redacted again for a key the cut forms."""
        gap, whole = (output.gap, output.whole) if output is not None else (None, None)
        trimmed = trim_middle(content, self._settings.max_output_chars, gap=gap, whole=whole)
        return content if trimmed is content else self._redact(trimmed)

    def _note_repeat(self, call: ToolUseBlock, content: str, *, result: str | None = None) -> str:
        """Count the call (``result`` None: it failed); past the threshold, tell the model."""
        repeat = self.repeats.record(call, result=result)
        if repeat is None:
            return content
        event = ToolRepeatedFailure if repeat.failed else ToolRepeatedCall
        self._emit(event(tool=call.name, count=repeat.count, limit_reached=repeat.limit_reached))
        return f"{content}\n{repeat_note(repeat)}"
