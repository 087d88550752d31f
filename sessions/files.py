"""Files the session touched: their state when last seen, and which changed since."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from providers.messages import Message, ToolUseBlock
from sessions.records import CheckpointRecord, SeenFile

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
    """sha256 hex digest of a regular file; None if it is larger than ``limit``, unreadable,
    or not a regular file (a FIFO would block the read, ``/dev/zero`` would never end)."""
    try:
        fd = os.open(path, _HASH_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode) and info.st_size <= limit
        return _hash(fd, limit) if regular else None
    except OSError:
        return None
    finally:
        os.close(fd)


def snapshot(path: Path, limit: int = DEFAULT_HASH_LIMIT) -> SeenFile:
    """The state of ``path`` now; only a regular file gets a size and hash.

    Only a regular file is opened (opening a device can have effects), and its open
    descriptor gives the size and hash (every ``read_file`` ends in one of these).
    """
    text = str(path)
    try:
        info = os.stat(text)
    except (OSError, ValueError):
        return SeenFile(path=text, exists=False)
    if not stat.S_ISREG(info.st_mode):
        return SeenFile(path=text, exists=True)
    digest = None
    try:
        fd = os.open(text, _HASH_FLAGS)  # a link is not followed: no hash then
    except (OSError, ValueError):
        fd = None
    if fd is not None:
        try:
            opened = os.fstat(fd)
            if stat.S_ISREG(opened.st_mode):  # still a regular file once open
                info = opened
                digest = _hash(fd, limit) if info.st_size <= limit else None
        except OSError:
            digest = None
        finally:
            os.close(fd)
    return SeenFile(
        path=text,
        exists=True,
        size=info.st_size,
        mtime_ns=info.st_mtime_ns,
        sha256=digest,
    )


_HASH_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
"""Opening never blocks (a FIFO) nor follows a link."""


def _hash(fd: int, limit: int) -> str | None:
    """sha256 of what ``fd`` holds; None once it passes ``limit`` (it may grow while read)."""
    digest = hashlib.sha256()
    remaining = limit + 1
    while remaining > 0 and (chunk := os.read(fd, min(1 << 20, remaining))):
        digest.update(chunk)
        remaining -= len(chunk)
    return None if remaining <= 0 else digest.hexdigest()


PathResolver = Callable[[str], Path | None]
"""A tool's path argument → the file in the workspace it names (resolved), or None if it
names none there: the tools' own resolution, handed in so the two always agree."""


def tool_path(
    root: Path, name: str, tool_input: dict[str, object], resolve: PathResolver | None = None
) -> Path | None:
    """The file a tracked tool call names, resolved (by ``resolve`` when given); None if it
    is not a path inside ``root`` (the workspace, already resolved).

    Paths outside the workspace were refused by the tools, so the session has not seen
    them and must not record (or hash) them.
    """
    if name not in TRACKED_TOOLS:
        return None
    raw = tool_input.get("path", tool_input.get("file_path"))
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        return None
    if resolve is not None:
        return resolve(raw)
    # On strings: with Path objects (and `parents`) this cost three times the system calls.
    top = str(root)
    try:
        path = os.path.realpath(os.path.join(top, os.path.expanduser(raw)))
    except (OSError, ValueError):
        return None
    inside = path == top or path.startswith(top.rstrip(os.sep) + os.sep)
    return Path(path) if inside else None


class TouchedFiles:
    """The files a session's tracked tool calls touch, from each call to its result.

    Args:
        root: The workspace, resolved.
        resolve: The tools' own resolution of a path argument (None: `tool_path`'s).
        hash_limit: The largest file hashed.
    """

    def __init__(self, root: Path, resolve: PathResolver | None, hash_limit: int) -> None:
        self._root = root
        self._resolve = resolve
        self._hash_limit = hash_limit
        self._calls: dict[str, ToolUseBlock] = {}
        """Call id → a tracked tool's call, until its result arrives (its path is resolved
        then: a link changed while the call waited for approval is followed as the tool did)."""
        self._noted: dict[str, SeenFile] = {}
        """Call id → the file its tool read whole, as it read it."""

    def called(self, message: Message) -> None:
        """Note the tracked calls ``message`` makes."""
        for use in message.tool_uses:
            if use.name in TRACKED_TOOLS:
                self._calls[use.id] = use

    def noted(self, tool_use_id: str, seen: SeenFile) -> None:
        """The file the call ``tool_use_id`` read whole, as its tool read it."""
        self._noted[tool_use_id] = seen

    def answered(self, message: Message) -> list[SeenFile] | None:
        """The files the tracked calls ``message`` answers touched: as their tool read them,
        or as they are now."""
        seen = []
        for result in message.tool_results:
            called = self._calls.pop(result.tool_use_id, None)
            noted = self._noted.pop(result.tool_use_id, None)
            if called is None:
                continue
            if noted is not None:
                seen.append(noted)
                continue
            path = tool_path(self._root, called.name, called.input, self._resolve)
            if path is not None:
                seen.append(snapshot(path, self._hash_limit))
        return seen or None


def changed_files(
    last_seen: dict[str, SeenFile | CheckpointRecord], limit: int = DEFAULT_HASH_LIMIT
) -> list[FileChange]:
    """The files whose state on disk now differs from their last recorded state, by path."""
    changes: list[FileChange] = []
    for path_text, seen in sorted(last_seen.items()):
        change = _compare(path_text, seen, limit)
        if change is not None:
            changes.append(FileChange(path=path_text, change=change))
    return changes


def _compare(path: str, seen: SeenFile | CheckpointRecord, limit: int) -> ChangeKind | None:
    # A str, not a Path: over the 25,000 files of a 100k-message session, building Path
    # objects cost as much as the stat calls themselves.
    existed = seen.existed_before if isinstance(seen, CheckpointRecord) else seen.exists
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # a NUL byte in a path read from the session file
        return "deleted" if existed else None
    if not existed:
        return "created"
    if not isinstance(seen, CheckpointRecord):
        if seen.size == info.st_size and seen.mtime_ns == info.st_mtime_ns:
            return None
        if seen.sha256 is None or seen.size != info.st_size:
            return "modified"
        known_hash = seen.sha256
    else:
        # A checkpoint without a later file state: the write may or may not have happened.
        known_hash = seen.content_hash or ""
    return None if content_hash(Path(path), limit) == known_hash else "modified"


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
