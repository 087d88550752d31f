"""The tool executor: validates, guards, runs, retries, checkpoints and trims tool calls.

`ToolExecutor.execute` never raises except on cancellation: every failure becomes a
`ToolResultBlock` with ``is_error=True`` that the model can read and act on. The arguments
are parsed by `tools.results.parse_arguments`, the call run (timeout, retries) by
`tools.attempts.Attempts`, and its outcome made the result by `tools.call_results.CallResults`.

Secrets are redacted where a tool's text enters the executor (its output, its failure, a
refusal), before anything cuts it: a key split by the output trim, or by an event's short
excerpt, would otherwise survive half-masked in the session, the log and the terminal.
"""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel

from providers.events import Event, EventSink
from providers.messages import ToolResultBlock, ToolUseBlock
from providers.provider import ToolSpec
from tools.attempts import Attempts, ToolRunner, run_tool
from tools.base import ErrorCategory, FileSeen, Tool, ToolContext, ToolError, ToolOutput
from tools.before_tool import BeforeToolChecks
from tools.blocking import in_worker
from tools.builtin import builtin_tools
from tools.call_results import CallResults
from tools.events import CheckpointRecorded, ToolStarted, UndoApplied
from tools.guard.sandbox import Sandbox
from tools.hooks import (
    ApprovalGate,
    ApprovalMode,
    Approver,
    BeforeToolHook,
    Refusal,
    SafetyPolicy,
    ToolInvocation,
)
from tools.results import Failure, classify_exception, parse_arguments
from tools.settings import ToolSettings
from tools.undo.checkpoints import Checkpoint, CheckpointStore
from tools.undo.command_changes import CommandRecorder
from tools.undo.report import UndoReport
from tools.undo.snapshots import SnapshotLimits, WorkspaceScanner

log = structlog.get_logger("tools")


class ToolExecutor:
    """Runs the model's tool calls inside the workspace, safely and reversibly.

    Args:
        workspace: The directory tools are confined to.
        settings: Limits (output size, timeouts, retries), or what gives the current ones,
            asked before each request and call (the tools offered depend on the model).
        approval: Which calls need the person's approval (or where to read it, per call).
        approver: Asks the person; None means non-interactive, so calls that need
            approval are refused with a result saying so.
        events: Receives `ToolFailed`, `ToolRetried`, `CheckpointRecorded`, ... events.
        tools: The tools offered (default: the built-in coding tools).
        hooks: Extra ``before_tool`` hooks, run after the safety policy and before approval;
            a `Permit` may skip or force approval, or rewrite the input (`BeforeToolChecks`).
        sleep: Waits between retries (inject a virtual clock's in tests).
        checkpoint_dir: Keep checkpoints there (``/undo`` works after ``--resume``).
        home: The person's home directory for the safety policy (default: ``$HOME``).
        sandbox: Confines the built-in run_command (default: ``workspace-write``).
        redact: Hides secrets in every result and event (e.g. `sessions.Redactor.text`).
        more_tools: Tools that come and go while the agent runs (MCP servers' tools),
            asked for each time the model is sent the tool list or calls a tool.
        runner: Runs a validated, permitted call inside its timeout (chaos: `tools.chaos`).
        read_denied: Whether a rule (``Read`` deny) withholds reading a path from search etc.
        outputs: Where a command's whole output is kept when the model is shown only part.
        turns_before: Turns the resumed session had; `turn` numbers go on from there.
        on_file_seen: Told of each file a call read whole (`ToolOutput.seen`), with its id.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        settings: ToolSettings | Callable[[], ToolSettings],
        approval: ApprovalMode | Callable[[], ApprovalMode],
        approver: Approver | None,
        events: EventSink | None = None,
        tools: Sequence[Tool[Any]] | None = None,
        hooks: Sequence[BeforeToolHook] = (),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        checkpoint_dir: Path | None = None,
        home: Path | None = None,
        sandbox: Sandbox | None = None,
        redact: Callable[[str], str] | None = None,
        more_tools: Callable[[], Sequence[Tool[Any]]] | None = None,
        runner: ToolRunner = run_tool,
        read_denied: Callable[[Path], bool] | None = None,
        outputs: Path | None = None,
        turns_before: int = 0,
        on_file_seen: Callable[[str, FileSeen], None] | None = None,
    ) -> None:
        self._workspace = workspace.resolve()
        self._read_denied: Callable[[Path], bool] = read_denied or (lambda path: False)
        self._outputs = outputs
        self._on_file_seen = on_file_seen
        self._runner = runner
        self._redact: Callable[[str], str] = redact or (lambda text: text)
        self._events = events
        self._sleep = sleep
        self._all_tools = builtin_tools(sandbox) if tools is None else list(tools)
        self._settings_of = settings if callable(settings) else itertools.repeat(settings).__next__
        self._store = CheckpointStore(self._workspace, checkpoint_dir)
        self._configure(self._settings_of())
        self._more_tools = more_tools or (lambda: ())
        self._checks = BeforeToolChecks(
            SafetyPolicy(home),
            hooks,
            ApprovalGate(
                approval,
                approver,
                allow_protected=sandbox is not None and sandbox.allow_protected_writes,
                hook_commands=sandbox.hook_commands if sandbox is not None else (),
            ),
            self._redact,
        )
        self._scanner = WorkspaceScanner(
            self._workspace,
            self._store.blobs,
            SnapshotLimits(
                max_file_bytes=self._settings.snapshot_max_file_bytes,
                max_total_bytes=self._settings.snapshot_max_total_bytes,
                max_files=self._settings.snapshot_max_files,
            ),
        )
        self._commands = CommandRecorder(self._scanner, self._store, emit=self._emit)
        # Continue the numbering of a resumed session: /undo knows how long ago a turn was.
        self.turn = max(self._store.last_turn, turns_before)
        self._calls = itertools.count(self._store.last_call + 1)
        self._specs: tuple[tuple[Tool[Any], ...], list[ToolSpec]] | None = None

    def _configure(self, settings: ToolSettings) -> None:
        """Use ``settings`` from now on; the counts of repeated calls start again."""
        self._settings = settings
        self._attempts = Attempts(settings, self._emit, self._sleep, self._redact, self._runner)
        chosen = self._all_tools
        if settings.enabled is not None:
            chosen = [tool for tool in chosen if tool.name in settings.enabled]
        self._tools: dict[str, Tool[Any]] = {tool.name: tool for tool in chosen}
        self._results = CallResults(settings, self._attempts, self._store, self._redact, self._emit)

    def specs(self) -> list[ToolSpec]:
        """The offered tools as the model sees them (name, description, JSON schema).

        Built once per tool set, not per request: generating the schemas took ~1.6 ms of
        every step. The cache is keyed on the offered tool objects themselves, so adding,
        removing or replacing a tool (built-in or from an MCP server) rebuilds it.
        """
        tools = tuple(self._offered().values())
        if self._specs is None or self._specs[0] != tools:
            specs = [
                ToolSpec(
                    name=tool.name, description=tool.description, input_schema=tool.input_schema()
                )
                for tool in tools
            ]
            self._specs = (tools, specs)
        return list(self._specs[1])

    def _offered(self) -> dict[str, Tool[Any]]:
        if (settings := self._settings_of()) is not self._settings:
            self._configure(settings)  # another model's, a tiny one's say
        enabled = self._settings.enabled
        extra = {
            tool.name: tool
            for tool in self._more_tools()
            if tool.name not in self._tools
            and (enabled is None or any(fnmatch.fnmatchcase(tool.name, p) for p in enabled))
        }
        return {**self._tools, **extra}

    @property
    def checkpoints(self) -> list[Checkpoint]:
        """Live checkpoints (path, existed_before, turn, tool_use_id), oldest first."""
        return self._store.entries

    @property
    def repeated_call_stop(self) -> str | None:
        """Set when one call failed ``repeated_failure_limit`` times this turn, or returned the
        same result ``repeated_call_limit`` times.

        The loop should end the turn with this message.
        """
        return self._results.repeats.stop_reason

    def begin_turn(self) -> None:
        """Start a new turn: later checkpoints form one `/undo` step; failure counts reset."""
        self.turn += 1
        self._results.repeats.reset()

    def undo_last_turn(self) -> UndoReport:
        """Restore the files changed in the latest turn that changed any; a file changed
        since the agent left it is not touched (its earlier version is saved beside it)."""
        report = self._store.undo_turn()
        if report.turn is not None:
            self._store.keep_contents(self._scanner.digests)
            self._emit(
                UndoApplied(
                    turn=report.turn,
                    restored=[str(p) for p in report.restored],
                    failed=[f"{f.path}: {f.reason}" for f in report.failed],
                    kept=[f"{k.path}: {k.reason}" for k in report.kept],
                )
            )
        return report

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock:
        """Run one tool call and return its result; never raises except on cancellation."""
        call_number = next(self._calls)  # the model's ids may repeat; this never does
        try:
            return await self._execute(call, call_number)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool or hook must not end the turn
            log.exception("tool_executor_bug", tool=call.name, tool_use_id=call.id)
            return self._results.failed(call, classify_exception(exc), call_number=call_number)

    async def _execute(self, call: ToolUseBlock, call_number: int) -> ToolResultBlock:
        offered = self._offered()
        tool = offered.get(call.name)
        if tool is None:
            names = ", ".join(sorted(offered))
            failure = Failure(
                f"there is no tool named {call.name!r}",
                ErrorCategory.PERMANENT,
                f"call one of the available tools: {names}",
            )
            return self._results.failed(call, failure)
        args = parse_arguments(tool, call.input, self._redact)
        if isinstance(args, str):
            return self._results.failed(call, Failure(args, ErrorCategory.PERMANENT), text=args)
        ctx = ToolContext(
            self._workspace,
            self._settings,
            lambda p: self._record(p, call.id, call_number),
            emit=self._emit,
            redact=self._redact,
            read_denied=self._read_denied,
            outputs=self._outputs,
            tool_use_id=call.id,
            turn=self.turn,
        )
        checked = await self._checks.check(ToolInvocation(call, tool, args, ctx))
        if isinstance(checked, Refusal):
            return self._results.refused(call, checked)
        args = checked.args  # a hook may have rewritten them
        self._emit(ToolStarted(tool=call.name, tool_use_id=call.id, kind=tool.kind))
        if tool.kind == "command":
            return await self._commands.run(
                call,
                turn=self.turn,
                number=call_number,
                command=lambda: self._run(call, tool, args, ctx, call_number),
            )
        result = await self._run(call, tool, args, ctx, call_number)
        if self._store.unsealed(call_number):  # a read recorded nothing: no thread hop
            await in_worker(self._store.seal_call, call_number)
        return result

    async def _run(
        self, call: ToolUseBlock, tool: Tool[Any], args: BaseModel, ctx: ToolContext, number: int
    ) -> ToolResultBlock:
        outcome, attempts = await self._attempts.run(call, tool, args, ctx)
        if isinstance(outcome, ToolOutput):
            if outcome.seen is not None and self._on_file_seen is not None:
                self._on_file_seen(call.id, outcome.seen)
            return self._results.succeeded(call, outcome)
        return self._results.failed(call, outcome, attempts=attempts, call_number=number)

    def _record(self, path: Path, tool_use_id: str, call_number: int) -> None:
        try:
            checkpoint = self._store.record(
                path, turn=self.turn, tool_use_id=tool_use_id, call=call_number
            )
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
                turn=self.turn,
                tool_use_id=tool_use_id,
            )
        )

    def _emit(self, event: Event) -> None:
        if self._events is not None:
            self._events(event)
