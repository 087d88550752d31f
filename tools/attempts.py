"""Running one validated tool call: under its timeout, failures as `Failure`s, and transient
failures of idempotent tools retried with backoff.

Secrets are redacted as the tool's text leaves it (output, failure message and hint), before
anything cuts it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import structlog
from pydantic import BaseModel

from providers.events import Event
from providers.messages import ToolUseBlock
from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput
from tools.events import ToolRetried, ToolTimedOut
from tools.results import Failure, classify_exception
from tools.settings import ToolSettings

log = structlog.get_logger("tools")

ToolRunner = Callable[[Tool[Any], BaseModel, ToolContext], Awaitable[ToolOutput]]
"""Runs a tool with its arguments: ``tool.run`` itself, or chaos mode's `tools.chaos`."""


async def run_tool(tool: Tool[Any], args: BaseModel, ctx: ToolContext) -> ToolOutput:
    """Run ``tool`` as it is."""
    return await tool.run(args, ctx)


@dataclass(frozen=True)
class Attempts:
    """How the executor runs a call it has validated and let through.

    Attributes:
        settings: The call's timeout, ``max_retries`` and ``retry_backoff``.
        emit: Receives `ToolTimedOut` and `ToolRetried`.
        sleep: Waits between retries.
        redact: Hides secrets in what the tool returned or raised.
        runner: Runs the tool, inside the timeout (chaos mode injects its tool faults here).
    """

    settings: ToolSettings
    emit: Callable[[Event], None]
    sleep: Callable[[float], Awaitable[None]]
    redact: Callable[[str], str]
    runner: ToolRunner = field(default=run_tool)

    async def run(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> tuple[ToolOutput | Failure, int]:
        """The call's last outcome and how many attempts it took."""
        attempt = 1
        while True:
            outcome = await self._attempt(call, tool, args, ctx)
            if isinstance(outcome, ToolOutput):
                return outcome, attempt
            retryable = outcome.category is ErrorCategory.TRANSIENT and tool.idempotent
            if not retryable or attempt > self.settings.max_retries:
                return outcome, attempt
            delay = self.settings.retry_backoff * 2 ** (attempt - 1)
            self.emit(
                ToolRetried(
                    tool=tool.name,
                    tool_use_id=call.id,
                    attempt=attempt,
                    delay=delay,
                    message=outcome.message,
                )
            )
            await self.sleep(delay)
            attempt += 1

    def redacted(self, failure: Failure) -> Failure:
        """``failure`` with secrets hidden in its message and hint."""
        return Failure(self.redact(failure.message), failure.category, self.redact(failure.hint))

    async def _attempt(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> ToolOutput | Failure:
        outcome = await self._outcome(call, tool, args, ctx)
        if isinstance(outcome, ToolOutput):
            return self._redacted_output(outcome)
        return self.redacted(outcome)

    def _redacted_output(self, output: ToolOutput) -> ToolOutput:
        """``output`` with secrets hidden; each side of a gap apart, so the gap stays put."""
        if output.gap is None:
            return replace(output, content=self.redact(output.content))
        head = self.redact(output.content[: output.gap.at])
        tail = self.redact(output.content[output.gap.at :])
        return replace(output, content=head + tail, gap=replace(output.gap, at=len(head)))

    async def _outcome(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext
    ) -> ToolOutput | Failure:
        timeout = tool.timeout(args, self.settings)
        try:
            async with asyncio.timeout(timeout):  # no task of its own, unlike wait_for
                return await self.runner(tool, args, ctx)
        except ToolError as exc:
            return Failure(exc.message, exc.category, exc.hint)
        except TimeoutError:
            self.emit(ToolTimedOut(tool=tool.name, tool_use_id=call.id, timeout=timeout))
            # Not retried: the same call would most likely wait just as long again, and the
            # abandoned worker thread may still be busy with the first attempt.
            if tool.idempotent:
                return Failure(
                    f"{tool.name} timed out after {timeout:g}s",
                    ErrorCategory.PERMANENT,
                    "ask for less at once (offset/limit, a narrower path or pattern)",
                )
            return Failure(
                f"{tool.name} timed out after {timeout:g}s; its effect is unknown",
                ErrorCategory.PERMANENT,
                "check the result with read_file or list_files before trying again",
            )
        except Exception as exc:
            log.warning("tool_raised", tool=tool.name, tool_use_id=call.id, exc_info=True)
            return classify_exception(exc)
