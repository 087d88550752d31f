"""`CommandRecorder`: what a shell command changed in the workspace, recorded for ``/undo``.

A file tool says which path it writes, so it is checkpointed before it writes. A command
could change anything, so the workspace is snapshotted before and after it runs and every
difference is recorded as a checkpoint (files too large to snapshot are named instead).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

from providers.events import Event
from providers.messages import ToolResultBlock, ToolUseBlock
from tools.blocking import in_worker
from tools.events import CommandChangedFiles
from tools.ignore import GitIgnore
from tools.undo.checkpoints import CheckpointStore
from tools.undo.snapshots import CommandChanges, ScanAbandoned, Snapshot, WorkspaceScanner

__all__ = ["CommandRecorder"]

log = structlog.get_logger("tools")
T = TypeVar("T")

SCAN_TIMEOUT = 60.0
"""Seconds a scan before or after a command may take. Past them (a hung mount, say) the
command goes on, or its result comes back, without what ``/undo`` needs."""
INTERRUPT_WAIT = 5.0
"""Seconds an interrupted command waits for its changes to be recorded before it gives up."""


class CommandRecorder:
    """Runs commands between two workspace snapshots and records what they changed.

    Args:
        scanner: Takes the workspace's snapshots.
        store: Where the changes become checkpoints.
        emit: Hears `CommandChangedFiles` after a command that changed files (on the
            caller's thread, never the scan's).
    """

    def __init__(
        self,
        scanner: WorkspaceScanner,
        store: CheckpointStore,
        *,
        scan_timeout: float = SCAN_TIMEOUT,
        emit: Callable[[Event], None] = lambda event: None,
    ) -> None:
        self._emit = emit
        self._scanner = scanner
        self._store = store
        self._scan_timeout = scan_timeout
        self._partial_shown = False

    async def run(
        self,
        call: ToolUseBlock,
        *,
        turn: int,
        number: int,
        command: Callable[[], Awaitable[ToolResultBlock]],
    ) -> ToolResultBlock:
        """Run ``command`` (call ``number`` of ``turn``), and note in its result what
        ``/undo`` could not keep."""
        try:
            ignore, before = await self._bounded(self._first_scan)
        except TimeoutError:
            return _noted(await command(), self._untracked())
        try:
            result = await command()
        except asyncio.CancelledError:
            self._record_now(before, ignore, call, turn, number)
            raise
        try:
            note, paths = await self._bounded(
                lambda stop: self._record(before, ignore, call, turn, number, stop)
            )
        except TimeoutError:
            return _noted(result, self._untracked())
        if paths:
            self._emit(CommandChangedFiles(tool_use_id=call.id, paths=paths))
        return _noted(result, note)

    async def _bounded(self, scan: Callable[[threading.Event], T]) -> T:
        """``scan(stop)`` in a worker thread, for at most ``scan_timeout`` seconds; then
        ``stop`` is set, so a scan that was only slow saves and records nothing more."""
        stop = threading.Event()
        try:
            async with asyncio.timeout(self._scan_timeout):
                return await in_worker(scan, stop)
        except TimeoutError:
            stop.set()
            log.warning("workspace_scan_timed_out", timeout=self._scan_timeout)
            raise

    def _first_scan(self, stop: threading.Event) -> tuple[GitIgnore, Snapshot]:
        ignore = self._scanner.ignore_rules()
        return ignore, self._scanner.snapshot(ignore, stop)

    def _record_now(
        self, before: Snapshot, ignore: GitIgnore, call: ToolUseBlock, turn: int, number: int
    ) -> None:
        """On an interrupt, record the command's changes before the cancellation goes on,
        so ``/undo`` right after sees them; at most `INTERRUPT_WAIT` seconds."""
        stop = threading.Event()

        def record() -> None:
            try:
                self._record(before, ignore, call, turn, number, stop)
            except ScanAbandoned:
                pass
            except Exception:  # nobody is left to hear it: the turn is being torn down
                log.warning("command_changes_not_recorded", tool_use_id=call.id, exc_info=True)

        worker = threading.Thread(target=record, name="agent-io-record", daemon=True)
        worker.start()
        worker.join(INTERRUPT_WAIT)
        stop.set()

    def _untracked(self) -> str:
        return (
            f"[/undo cannot restore what this command changed: scanning the workspace took "
            f"longer than {self._scan_timeout:g}s]"
        )

    def _record(
        self,
        before: Snapshot,
        ignore: GitIgnore,
        call: ToolUseBlock,
        turn: int,
        number: int,
        stop: threading.Event,
    ) -> tuple[str, list[str]]:
        found = self._scanner.changes(before, self._scanner.snapshot(ignore, stop))
        if stop.is_set():  # given up on while it compared: the caller says nothing was kept
            raise ScanAbandoned
        self._store.record_changes(found.changes, turn=turn, tool_use_id=call.id, call=number)
        self._store.keep_contents(self._scanner.digests)
        log.info(
            "command_changes_recorded",
            tool_use_id=call.id,
            changed=len(found.changes),
            not_undoable=len(found.not_undoable),
        )
        return self._note(found), [change.rel for change in found.changes]

    def _note(self, found: CommandChanges) -> str:
        lines = []
        if found.not_undoable:
            count = len(found.not_undoable)
            names = ", ".join(found.not_undoable[:10])
            more = f" and {count - 10} more" if count > 10 else ""
            lines.append(
                f"[/undo cannot restore {count} changed file(s) that were too "
                f"large to snapshot: {names}{more}]"
            )
        if found.notes and not self._partial_shown:
            self._partial_shown = True
            lines.append(f"[snapshot for /undo is partial: {'; '.join(found.notes)}]")
        return "\n".join(lines)


def _noted(result: ToolResultBlock, note: str) -> ToolResultBlock:
    if not note:
        return result
    return result.model_copy(update={"content": f"{result.content}\n{note}"})
