"""What an undo did, file by file, and what ``/undo`` would undo, in words for the person."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RestoreFailure:
    """A path that could not be put back, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class KeptChange:
    """A path left alone because it changed after the agent's edit."""

    path: Path
    reason: str
    saved_as: Path | None = None


@dataclass(frozen=True)
class UndoReport:
    """What an undo or rollback did: paths restored (in order), kept and failed.

    ``restored`` holds every path put back as it was before the turn; ``removed`` those of
    them the turn had created, so putting them back meant deleting them.
    """

    turn: int | None
    restored: list[Path] = field(default_factory=list)
    failed: list[RestoreFailure] = field(default_factory=list)
    kept: list[KeptChange] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.kept

    def __str__(self) -> str:
        return self.describe()

    def describe(self, root: Path | None = None) -> str:
        """A short text for the person, naming each file (relative to ``root`` if given)."""
        if self.turn is None:
            return "Nothing to undo."

        def name(path: Path) -> str:
            return _shown(path, root)

        count = len(self.restored)
        lines = [f"Undid turn {self.turn}: {count} file{'' if count == 1 else 's'} put back."]
        for path in self.restored:
            done = "removed (the turn created it)" if path in self.removed else "restored"
            lines.append(f"  {name(path)}: {done}")
        for kept in self.kept:
            line = f"  Left {name(kept.path)} as it is: {kept.reason}"
            if kept.saved_as is not None:
                line += f"; its version from before the change is in {name(kept.saved_as)}"
            lines.append(line + ".")
        for failure in self.failed:
            lines.append(f"  Could not restore {name(failure.path)}: {failure.reason}.")
        return "\n".join(lines)


@dataclass(frozen=True)
class UndoPreview:
    """What ``/undo`` would undo: the latest turn that changed files, and how long ago."""

    turn: int
    turns_ago: int
    """Turns since it (0: the last turn); a person is asked before an older turn is undone."""
    files: list[tuple[str, bool]]
    """Each file (relative to the workspace) and whether that turn created it."""

    def question(self) -> str:
        """The question asked before undoing a turn older than the last one."""
        later = "the last turn" if self.turns_ago == 1 else f"the last {self.turns_ago} turns"
        names = ", ".join(rel + (" (created)" if new else "") for rel, new in self.files[:5])
        more = f" and {len(self.files) - 5} more" if len(self.files) > 5 else ""
        return (
            f"{later.capitalize()} changed no files. Undo turn {self.turn} instead, "
            f"{self.turns_ago} turn{'' if self.turns_ago == 1 else 's'} ago ({names}{more})? [y/N] "
        )


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return str(path)
