"""Files the session touched: their state when last seen, and which changed since."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sessions.records import CheckpointRecord, FileStateRecord

TRACKED_TOOLS = ("read_file", "write_file", "edit_file")
"""Tools whose ``path`` input names a file the session has seen."""
DEFAULT_HASH_LIMIT = 8 * 1024 * 1024
ChangeKind = Literal["modified", "deleted", "created"]


@dataclass(frozen=True)
class FileChange:
    """A file that differs from how the session last saw it."""

    path: str
    change: ChangeKind

    def describe(self) -> str:
        """e.g. ``src/app.py (modified)``."""
        return f"{self.path} ({self.change})"


def content_hash(path: Path, limit: int = DEFAULT_HASH_LIMIT) -> str | None:
    """sha256 hex digest of the file; None if it is larger than ``limit`` or unreadable."""
    try:
        if path.stat().st_size > limit:
            return None
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def snapshot(path: Path, ts: float, limit: int = DEFAULT_HASH_LIMIT) -> FileStateRecord:
    """The state of ``path`` now, as a record."""
    try:
        stat = path.stat()
    except OSError:
        return FileStateRecord(ts=ts, path=str(path), exists=False)
    return FileStateRecord(
        ts=ts,
        path=str(path),
        exists=True,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        sha256=content_hash(path, limit),
    )


def tool_path(cwd: Path, name: str, tool_input: dict[str, object]) -> Path | None:
    """The absolute file path a tracked tool call names, or None."""
    if name not in TRACKED_TOOLS:
        return None
    raw = tool_input.get("path", tool_input.get("file_path"))
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def changed_files(
    last_seen: dict[str, FileStateRecord | CheckpointRecord], limit: int = DEFAULT_HASH_LIMIT
) -> list[FileChange]:
    """The files whose state on disk now differs from their last recorded state, by path."""
    changes: list[FileChange] = []
    for path_text, seen in sorted(last_seen.items()):
        change = _compare(Path(path_text), seen, limit)
        if change is not None:
            changes.append(FileChange(path=path_text, change=change))
    return changes


def _compare(path: Path, seen: FileStateRecord | CheckpointRecord, limit: int) -> ChangeKind | None:
    existed = seen.exists if isinstance(seen, FileStateRecord) else seen.existed_before
    try:
        stat = path.stat()
    except OSError:
        return "deleted" if existed else None
    if not existed:
        return "created"
    if isinstance(seen, FileStateRecord):
        if seen.size == stat.st_size and seen.mtime_ns == stat.st_mtime_ns:
            return None
        if seen.sha256 is None or seen.size != stat.st_size:
            return "modified"
        known_hash = seen.sha256
    else:
        # A checkpoint without a later file state: the write may or may not have happened.
        known_hash = seen.content_hash or ""
    return None if content_hash(path, limit) == known_hash else "modified"


def changed_files_note(changes: list[FileChange]) -> str | None:
    """A note for the model listing the changed files; None when nothing changed."""
    if not changes:
        return None
    listed = "\n".join(f"- {change.describe()}" for change in changes)
    return (
        "Since this session last looked at them, these files changed on disk "
        "(by the person, another program, or an interrupted write). "
        "Read them again before relying on or editing them:\n" + listed
    )
