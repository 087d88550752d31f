"""`CommandRecorder`: what a shell command changed in the workspace, recorded for ``/undo``.

A file tool says which path it writes, so it is checkpointed before it writes. A command
could change anything, so the workspace is snapshotted before and after it runs and every
difference is recorded as a checkpoint (files too large to snapshot are named instead).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from agent.llm.messages import ToolResultBlock, ToolUseBlock
from tools.blocking import in_worker
from tools.checkpoints import CheckpointStore
from tools.snapshots import CommandChanges, Snapshot, WorkspaceScanner

__all__ = ["CommandRecorder"]

log = structlog.get_logger("tools")


class CommandRecorder:
    """Runs commands between two workspace snapshots and records what they changed.

    Args:
        scanner: Takes the workspace's snapshots.
        store: Where the changes become checkpoints.
    """

    def __init__(self, scanner: WorkspaceScanner, store: CheckpointStore) -> None:
        self._scanner = scanner
        self._store = store
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
        ignore = self._scanner.ignore_rules()
        before = await in_worker(self._scanner.snapshot, ignore)
        try:
            result = await command()
        except asyncio.CancelledError:
            self._record(before, ignore, call, turn, number)  # the group is dead by now
            raise
        note = await in_worker(self._record, before, ignore, call, turn, number)
        if note:
            result = result.model_copy(update={"content": f"{result.content}\n{note}"})
        return result

    def _record(
        self, before: Snapshot, ignore: Any, call: ToolUseBlock, turn: int, number: int
    ) -> str:
        found = self._scanner.changes(before, self._scanner.snapshot(ignore))
        self._store.record_changes(found.changes, turn=turn, tool_use_id=call.id, call=number)
        self._store.keep_contents(self._scanner.digests)
        log.info(
            "command_changes_recorded",
            tool_use_id=call.id,
            changed=len(found.changes),
            not_undoable=len(found.not_undoable),
        )
        return self._note(found)

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
