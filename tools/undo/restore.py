"""Putting one path back the way it was before a turn, without ever losing anyone's work.

A `Plan` says what a path held before the turn (``target``) and what the agent left there
(``expected``). Before anything is overwritten or deleted the current state is compared with
``expected``: if the person (or anything else) changed the path since, it is left alone and
the earlier version is written beside it (``notes.md.undo``) instead. Every step goes through
`tools.guard.safe_fs`, so a directory replaced by a symlink stops the restore rather than
redirecting it outside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tools.guard.safe_fs import (
    FileState,
    Observed,
    Other,
    Unreachable,
    materialize,
    observe,
    open_parent,
    remove,
    split_relative,
)
from tools.undo.checkpoint_files import BlobStore

BESIDE_SUFFIX = ".undo"
_MAX_BESIDE = 100


@dataclass(frozen=True)
class Plan:
    """One path to restore: ``target`` (None: absent) and what the agent left (``expected``,
    trusted only when ``known``)."""

    rel: str
    target: FileState | None
    expected: FileState | None
    known: bool

    @property
    def no_change(self) -> bool:
        """The turn left the path as it found it (created then deleted, say)."""
        if not self.known:
            return False
        if self.target is None or self.expected is None:
            return self.target is None and self.expected is None
        return self.target.same_content(self.expected) and self.target.mode == self.expected.mode

    @property
    def depth(self) -> int:
        return self.rel.count("/")


@dataclass(frozen=True)
class Outcome:
    """What happened to one path."""

    result: Literal["restored", "kept", "failed"]
    reason: str = ""
    saved_as: str | None = None


def order(plans: list[Plan]) -> list[Plan]:
    """Removals first, deepest first; then writes, shallowest first (so a symlink or file
    the turn put where a directory was is gone before the directory's files come back)."""
    plans = [p for p in plans if not p.no_change]
    removals = sorted((p for p in plans if p.target is None), key=lambda p: -p.depth)
    writes = sorted((p for p in plans if p.target is not None), key=lambda p: p.depth)
    return removals + writes


def apply(root: Path, blobs: BlobStore, plan: Plan, *, verify: bool) -> Outcome:
    """Restore ``plan``; with ``verify`` only if the path still holds what the agent left."""
    try:
        parts = split_relative(plan.rel)
        with open_parent(root, parts, create=plan.target is not None) as dir_fd:
            return _apply_in(dir_fd, parts[-1], blobs, plan, verify)
    except Unreachable as exc:
        if exc.missing and plan.target is None:
            return Outcome("restored")  # its directory is gone, so is the file
        return Outcome("failed", str(exc))
    except OSError as exc:
        return Outcome("failed", exc.strerror or str(exc))


def _apply_in(dir_fd: int, name: str, blobs: BlobStore, plan: Plan, verify: bool) -> Outcome:
    current = observe(dir_fd, name)
    if _same(current, plan.target) and _same_mode(current, plan.target):
        return Outcome("restored")
    if verify and not (plan.known and _same(current, plan.expected)):
        return _keep(dir_fd, name, blobs, plan, current)
    if plan.target is None:
        if isinstance(current, Other):
            return Outcome("failed", f"it is now {current.what}")
        remove(dir_fd, name, current)
    else:
        if isinstance(current, Other):
            remove(dir_fd, name, current)  # only an empty directory goes; else OSError
        materialize(dir_fd, name, plan.target, blobs.read(plan.target.digest), replace=True)
    return Outcome("restored")


def _keep(dir_fd: int, name: str, blobs: BlobStore, plan: Plan, current: Observed) -> Outcome:
    what = _changed(current)
    if plan.target is None:
        return Outcome("kept", f"{what} since the agent's change; left as is")
    for n in range(1, _MAX_BESIDE + 1):
        beside = f"{name}{BESIDE_SUFFIX}" + ("" if n == 1 else f"-{n}")
        try:
            content = blobs.read(plan.target.digest)
            materialize(dir_fd, beside, plan.target, content, replace=False)
        except FileExistsError:
            continue
        parent = plan.rel.rpartition("/")[0]
        saved = f"{parent}/{beside}" if parent else beside
        return Outcome("kept", f"{what} since the agent's change; left as is", saved)
    return Outcome("failed", f"{what} since the agent's change, and no free name for a copy")


def _changed(current: Observed) -> str:
    if current is None:
        return "deleted"
    if isinstance(current, Other):
        return f"replaced by {current.what}"
    return "changed"


def _same_mode(current: Observed, state: FileState | None) -> bool:
    if not isinstance(current, FileState) or state is None or state.kind == "symlink":
        return True
    return current.mode == state.mode


def _same(current: Observed, state: FileState | None) -> bool:
    if state is None:
        return current is None
    return state.same_content(current)
