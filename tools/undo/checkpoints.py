"""Checkpoints: what each path held before a tool changed it, and what the tool left there.

They make ``/undo`` possible (restore the last turn's changes, also after ``--resume``) and
let the executor roll back a call that failed part way. A checkpoint belongs to one call
(``call``, a number unique in the session, whatever id the model gave the call), so a
rollback only ever touches its own call's effects. Restores go through `tools.undo.restore`:
containment is checked again at restore time, symlinks are never followed, and a path
someone changed since the agent did is left alone with the earlier version saved beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tools.guard.safe_fs import FileState, Other, Unreachable, observe, open_parent, split_relative
from tools.undo.checkpoint_files import BlobStore, CheckpointIndex, make_private_dir
from tools.undo.report import KeptChange, RestoreFailure, UndoPreview, UndoReport
from tools.undo.restore import Outcome, Plan, apply, order
from tools.undo.snapshots import Change


@dataclass(frozen=True)
class Checkpoint:
    """Metadata of one recorded path (the content itself is kept by the blob store)."""

    id: int
    path: Path
    rel: str
    before: FileState | None
    turn: int
    tool_use_id: str
    call: int
    after: FileState | None = None
    sealed: bool = False
    """Whether ``after`` is known (set once the call finished)."""

    @property
    def existed_before(self) -> bool:
        return self.before is not None


def undo_preview(entries: list[Checkpoint], current_turn: int) -> UndoPreview | None:
    """The `UndoPreview` of ``entries`` (live checkpoints) at ``current_turn``; None if
    there is nothing to undo."""
    turn = max((c.turn for c in entries), default=None)
    if turn is None:
        return None
    files: dict[str, bool] = {}
    for checkpoint in entries:
        if checkpoint.turn == turn:
            files.setdefault(checkpoint.rel, not checkpoint.existed_before)
    return UndoPreview(turn, max(current_turn - turn, 0), list(files.items()))


class _State(BaseModel):
    kind: str
    digest: str
    mode: int = 0o644


class _Added(BaseModel):
    op: str
    id: int
    call: int
    turn: int
    tool_use_id: str
    path: str
    before: _State | None
    after: _State | None = None
    sealed: bool = False


def _state(data: _State | None) -> FileState | None:
    if data is None:
        return None
    if data.kind not in ("file", "symlink"):
        raise ValueError(f"unknown kind {data.kind!r}")
    return FileState("file" if data.kind == "file" else "symlink", data.digest, data.mode & 0o7777)


def _dump(state: FileState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {"kind": state.kind, "digest": state.digest, "mode": state.mode}


class CheckpointStore:
    """The checkpoints of one session, persisted under ``directory`` when it is given.

    Args:
        workspace: The root every checkpoint path is inside.
        directory: The session's checkpoint directory (0700); None keeps them in memory.
    """

    def __init__(self, workspace: Path, directory: Path | None = None) -> None:
        self.root = workspace.resolve()
        if directory is not None:
            make_private_dir(directory)
        self.blobs = BlobStore(directory / "blobs" if directory is not None else None)
        self._index = CheckpointIndex(directory)
        self._entries: list[Checkpoint] = []
        self._lock = threading.Lock()
        self._load()
        self._next_id = max((c.id for c in self._entries), default=0) + 1

    @property
    def entries(self) -> list[Checkpoint]:
        """All live checkpoints, oldest first."""
        return list(self._entries)

    @property
    def last_turn(self) -> int:
        return max((c.turn for c in self._entries), default=0)

    @property
    def last_call(self) -> int:
        return max((c.call for c in self._entries), default=0)

    def record(self, path: Path, *, turn: int, tool_use_id: str, call: int) -> Checkpoint:
        """Save the current state of ``path`` before a tool changes it.

        Raises:
            OSError: it cannot be saved (outside the workspace, a directory, unreadable).
        """
        rel = self._relative(path)
        parts = split_relative(rel)
        before = self._capture(parts)
        with self._lock:
            checkpoint = Checkpoint(
                self._next_id, self.root / rel, rel, before, turn, tool_use_id, call
            )
            self._add([checkpoint])
        return checkpoint

    def unsealed(self, call: int) -> bool:
        """Whether ``call`` recorded a path it has not sealed yet (no file work to check)."""
        with self._lock:
            return any(c.call == call and not c.sealed for c in self._entries)

    def seal_call(self, call: int) -> None:
        """Note what the call left at each path it recorded (for the check before an undo)."""
        with self._lock:
            pending = [c for c in self._entries if c.call == call and not c.sealed]
        sealed: list[Checkpoint] = []
        for checkpoint in pending:
            try:
                with open_parent(self.root, split_relative(checkpoint.rel), create=False) as fd:
                    now = observe(fd, checkpoint.rel.rpartition("/")[2])
            except OSError:
                continue  # unknown: an undo will keep the path and save the old version aside
            after = now if isinstance(now, FileState) else None
            if isinstance(now, Other):
                continue
            sealed.append(replace(checkpoint, after=after, sealed=True))
        with self._lock:
            by_id = {c.id: c for c in sealed}
            self._entries = [by_id.get(c.id, c) for c in self._entries]
            self._index.append(
                *({"op": "seal", "id": c.id, "after": _dump(c.after)} for c in sealed)
            )

    def record_changes(
        self, changes: Iterable[Change], *, turn: int, tool_use_id: str, call: int
    ) -> list[Checkpoint]:
        """Record what a command changed (before and after states are both known)."""
        with self._lock:
            added: list[Checkpoint] = []
            for change in changes:
                added.append(
                    Checkpoint(
                        self._next_id + len(added),
                        self.root / change.rel,
                        change.rel,
                        change.before,
                        turn,
                        tool_use_id,
                        call,
                        after=change.after,
                        sealed=True,
                    )
                )
            self._add(added)
        return added

    def undo_turn(self, turn: int | None = None) -> UndoReport:
        """Restore the paths of ``turn`` (default: the latest turn with changes), checking
        first that each still holds what the agent left."""
        if turn is None:
            turn = max((c.turn for c in self._entries), default=None)
        if turn is None:
            return UndoReport(turn=None)
        return self._restore([c for c in self._entries if c.turn == turn], turn, verify=True)

    def roll_back_call(self, call: int) -> UndoReport:
        """Restore what one call changed (used at once when the call failed part way)."""
        chosen = [c for c in self._entries if c.call == call]
        return self._restore(chosen, chosen[0].turn if chosen else None, verify=False)

    def keep_contents(self, extra: set[str]) -> None:
        """Delete saved contents no live checkpoint and no entry of ``extra`` needs."""
        with self._lock:
            wanted = {c.before.digest for c in self._entries if c.before is not None}
            self.blobs.keep_only(wanted | extra)

    def _restore(self, chosen: list[Checkpoint], turn: int | None, *, verify: bool) -> UndoReport:
        by_path: dict[str, list[Checkpoint]] = {}
        for checkpoint in chosen:
            by_path.setdefault(checkpoint.rel, []).append(checkpoint)
        plans = [
            Plan(rel, group[0].before, group[-1].after, group[-1].sealed)
            for rel, group in by_path.items()
        ]
        report = UndoReport(turn=turn)
        for plan in order(plans):
            self._report(report, plan, apply(self.root, self.blobs, plan, verify=verify))
        with self._lock:
            dropped = {c.id for c in chosen}
            self._entries = [c for c in self._entries if c.id not in dropped]
            self._index.append({"op": "drop", "ids": sorted(dropped)})
        return report

    def _report(self, report: UndoReport, plan: Plan, outcome: Outcome) -> None:
        path = self.root / plan.rel
        if outcome.result == "restored":
            report.restored.append(path)
            if plan.target is None:
                report.removed.append(path)
        elif outcome.result == "kept":
            saved = self.root / outcome.saved_as if outcome.saved_as else None
            report.kept.append(KeptChange(path, outcome.reason, saved))
        else:
            report.failed.append(RestoreFailure(path, outcome.reason))

    def _relative(self, path: Path) -> str:
        candidate = path if path.is_absolute() else self.root / path
        for form in (candidate, candidate.parent.resolve() / candidate.name):
            try:
                return form.relative_to(self.root).as_posix()
            except ValueError:
                continue
        raise Unreachable(f"{path} is outside the workspace {self.root}")

    def _capture(self, parts: list[str]) -> FileState | None:
        try:
            with open_parent(self.root, parts, create=False) as dir_fd:
                writer = self.blobs.writer()
                try:
                    state = observe(dir_fd, parts[-1], writer.write)
                except BaseException:
                    writer.abort()
                    raise
                if isinstance(state, FileState):
                    writer.commit(state.digest)
                    return state
                writer.abort()
                if isinstance(state, Other):
                    raise Unreachable(f"{'/'.join(parts)} is {state.what}")
                return None
        except Unreachable as exc:
            if exc.missing:
                return None
            raise

    def _add(self, checkpoints: list[Checkpoint]) -> None:
        # The contents first: an index entry must never outlive the copy it points to.
        self.blobs.sync({c.before.digest for c in checkpoints if c.before and c.before.digest})
        self._index.append(
            *(
                {
                    "op": "add",
                    "id": c.id,
                    "call": c.call,
                    "turn": c.turn,
                    "tool_use_id": c.tool_use_id,
                    "path": c.rel,
                    "before": _dump(c.before),
                    "after": _dump(c.after),
                    "sealed": c.sealed,
                }
                for c in checkpoints
            )
        )
        self._entries.extend(checkpoints)
        self._next_id += len(checkpoints)

    def _load(self) -> None:
        live: dict[int, Checkpoint] = {}
        for record in self._index.load():
            op = record.get("op")
            try:
                if op == "add":
                    added = _Added.model_validate(record)
                    split_relative(added.path)
                    live[added.id] = Checkpoint(
                        added.id,
                        self.root / added.path,
                        added.path,
                        _state(added.before),
                        added.turn,
                        added.tool_use_id,
                        added.call,
                        _state(added.after),
                        added.sealed,
                    )
                elif op == "seal" and record.get("id") in live:
                    raw = record["after"]
                    after = _state(_State.model_validate(raw) if raw is not None else None)
                    live[record["id"]] = replace(live[record["id"]], after=after, sealed=True)
                elif op == "drop" and isinstance(record.get("ids"), list):
                    for dropped in record["ids"]:
                        if isinstance(dropped, int):
                            live.pop(dropped, None)
            except (ValidationError, ValueError, KeyError, TypeError, OSError):
                continue
        self._entries = sorted(live.values(), key=lambda c: c.id)
