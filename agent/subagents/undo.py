"""``/undo`` of what children changed: a child's edits belong to the parent's turn that ran it.

Each child keeps its own checkpoints (its executor's). `ChildEdits` remembers, for the
children of this run, which parent turn each ran in; `undo_last_turn` then puts back the
latest turn that changed files, the parent's own changes and its children's together.
"""

from __future__ import annotations

from dataclasses import replace

from tools import ToolExecutor, UndoPreview, UndoReport, undo_preview
from tools.undo.checkpoints import Checkpoint


class ChildEdits:
    """The children's executors of this run, by the parent turn each ran in."""

    def __init__(self) -> None:
        self._children: list[tuple[int, ToolExecutor]] = []

    def add(self, executor: ToolExecutor, parent_turn: int) -> None:
        """A child starts with ``executor`` in the parent's turn ``parent_turn``."""
        self._children.append((parent_turn, executor))

    def ran_in(self, turn: int) -> list[ToolExecutor]:
        """The executors of the children that ran in the parent's ``turn``, latest first."""
        return [executor for ran, executor in reversed(self._children) if ran == turn]

    def checkpoints(self) -> list[Checkpoint]:
        """The children's live checkpoints, each numbered by its parent's turn."""
        return [
            replace(checkpoint, turn=turn)
            for turn, executor in self._children
            for checkpoint in executor.checkpoints
        ]


def preview(parent: ToolExecutor, children: ChildEdits) -> UndoPreview | None:
    """What ``/undo`` would put back: the latest turn whose tools, or children, changed files."""
    return undo_preview([*parent.checkpoints, *children.checkpoints()], parent.turn)


def undo_last_turn(parent: ToolExecutor, children: ChildEdits) -> UndoReport:
    """Put back what the latest turn that changed files changed, its children's edits too."""
    own = max((c.turn for c in parent.checkpoints), default=None)
    theirs = max((c.turn for c in children.checkpoints()), default=None)
    if theirs is None or (own is not None and own > theirs):
        return parent.undo_last_turn()
    reports = [
        executor.undo_last_turn() for executor in children.ran_in(theirs) if executor.checkpoints
    ]
    if own == theirs:
        reports.append(parent.undo_last_turn())
    return UndoReport(
        turn=theirs,
        restored=[path for report in reports for path in report.restored],
        failed=[failure for report in reports for failure in report.failed],
        kept=[kept for report in reports for kept in report.kept],
        removed=[path for report in reports for path in report.removed],
    )
