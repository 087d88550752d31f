"""Checkpoints: the prior content (or absence) of every file before a tool changes it.

They make `/undo` possible (restore the last turn's changes) and let the executor roll back
a call that failed part way. Restores run last in, first out, and a restore that fails is
reported, never hidden.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Checkpoint:
    """Metadata of one recorded file state (the content itself is kept by the store)."""

    id: int
    path: Path
    existed_before: bool
    turn: int
    tool_use_id: str


@dataclass(frozen=True)
class RestoreFailure:
    """A file that could not be put back, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class UndoReport:
    """What an undo or rollback did: files restored (in order) and files that failed."""

    turn: int | None
    restored: list[Path] = field(default_factory=list)
    failed: list[RestoreFailure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """A short line for the person."""
        if self.turn is None:
            return "Nothing to undo."
        text = f"Restored {len(self.restored)} file(s)"
        if self.failed:
            names = ", ".join(f"{f.path} ({f.reason})" for f in self.failed)
            text += f"; could not restore {len(self.failed)}: {names}"
        return text + "."


class CheckpointStore:
    """Keeps prior file contents in memory, or as files under ``directory`` if given."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory
        self._entries: list[Checkpoint] = []
        self._memory: dict[int, bytes] = {}
        self._ids = itertools.count(1)

    @property
    def entries(self) -> list[Checkpoint]:
        """All live checkpoints, oldest first."""
        return list(self._entries)

    def record(self, path: Path, *, turn: int, tool_use_id: str) -> Checkpoint:
        """Save the current state of ``path`` before it is changed."""
        existed = path.is_file()
        content = path.read_bytes() if existed else None
        checkpoint = Checkpoint(next(self._ids), path, existed, turn, tool_use_id)
        if content is not None:
            self._store(checkpoint.id, content)
        self._entries.append(checkpoint)
        return checkpoint

    def undo_turn(self, turn: int | None = None) -> UndoReport:
        """Restore the files of ``turn`` (default: the latest turn with changes), LIFO."""
        if turn is None:
            turn = max((c.turn for c in self._entries), default=None)
        if turn is None:
            return UndoReport(turn=None)
        return self._restore([c for c in self._entries if c.turn == turn], turn)

    def roll_back_call(self, tool_use_id: str) -> UndoReport:
        """Restore what one tool call changed, LIFO (used when the call failed part way)."""
        chosen = [c for c in self._entries if c.tool_use_id == tool_use_id]
        return self._restore(chosen, chosen[0].turn if chosen else None)

    def _restore(self, chosen: list[Checkpoint], turn: int | None) -> UndoReport:
        restored: list[Path] = []
        failed: list[RestoreFailure] = []
        for checkpoint in reversed(chosen):
            try:
                self._put_back(checkpoint)
            except OSError as exc:
                failed.append(RestoreFailure(checkpoint.path, exc.strerror or str(exc)))
            else:
                if checkpoint.path not in restored:
                    restored.append(checkpoint.path)
            self._entries.remove(checkpoint)
            self._discard(checkpoint.id)
        return UndoReport(turn=turn, restored=restored, failed=failed)

    def _put_back(self, checkpoint: Checkpoint) -> None:
        if not checkpoint.existed_before:
            with contextlib.suppress(FileNotFoundError):
                checkpoint.path.unlink()
            return
        checkpoint.path.parent.mkdir(parents=True, exist_ok=True)
        checkpoint.path.write_bytes(self._load(checkpoint.id))

    def _store(self, checkpoint_id: int, content: bytes) -> None:
        if self._directory is None:
            self._memory[checkpoint_id] = content
            return
        self._directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self._directory / f"{checkpoint_id}.orig").write_bytes(content)

    def _load(self, checkpoint_id: int) -> bytes:
        if self._directory is None:
            return self._memory[checkpoint_id]
        return (self._directory / f"{checkpoint_id}.orig").read_bytes()

    def _discard(self, checkpoint_id: int) -> None:
        self._memory.pop(checkpoint_id, None)
        if self._directory is not None:
            with contextlib.suppress(OSError):
                (self._directory / f"{checkpoint_id}.orig").unlink()
