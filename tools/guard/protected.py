"""Protected paths: files inside the workspace that run code or change the agent's own rules.

A change to ``.git/config`` (``core.fsmonitor``, aliases), ``.git/hooks/`` or ``.git`` (when it
is a file pointing at a git directory) runs code on the person's next git command; a change to
``agent.yaml`` or ``.agent/`` changes what the agent itself is allowed to do. File tools refuse
to write them without the person's approval, and `ProtectedSnapshot` undoes any change a
command makes to them. Nothing here follows a symlink.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

_ROOTS = (".git/config", ".git/hooks", ".git", "agent.yaml", ".agent")
_MAX_FILE_BYTES = 1 << 20
_MAX_ENTRIES = 2_000


def protected_reason(workspace: Path, path: Path) -> str | None:
    """Why writing ``path`` (inside ``workspace``) needs the person's say-so, or None."""
    try:
        parts = [p.casefold() for p in path.relative_to(workspace).parts]
    except ValueError:
        return None
    if not parts:
        return None
    if parts[0] == ".git" and (len(parts) == 1 or parts[1] in {"config", "hooks"}):
        return "git configuration and hooks run code on the person's next git command"
    if parts == ["agent.yaml"] or parts[0] == ".agent":
        return "it is the agent's own configuration"
    return None


@dataclass(frozen=True)
class _Entry:
    kind: str  # "file", "dir" or "link"
    mode: int
    data: bytes = b""


@dataclass
class ProtectedSnapshot:
    """The state of every protected path before a command, to undo what the command changed."""

    workspace: Path
    entries: dict[str, _Entry] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def take(cls, workspace: Path) -> ProtectedSnapshot:
        snapshot = cls(workspace)
        for root in _ROOTS:
            for rel in snapshot._walk(root):
                entry = _read(workspace / rel)
                if entry is not None:
                    snapshot.entries[rel] = entry
        return snapshot

    def restore(self) -> list[str]:
        """Undo changes made since `take`; returns the relative paths put back or removed."""
        changed: list[str] = []
        current = {rel for root in _ROOTS for rel in self._walk(root)}
        for rel in sorted(current - self.entries.keys(), key=len, reverse=True):
            if not self._guarded(rel) or rel in self.skipped or not _remove(self.workspace / rel):
                continue
            changed.append(rel)
        for rel, entry in sorted(self.entries.items()):
            path = self.workspace / rel
            if not self._guarded(rel) or _read(path) == entry:
                continue
            _put_back(self.workspace, rel, entry)
            changed.append(rel)
        return sorted(set(changed))

    def _guarded(self, rel: str) -> bool:
        """Whether a change to ``rel`` is undone.

        A repository the command created (``git init``) or removed as a whole is the
        command's business: no half of it is put back or taken away.
        """
        if rel != ".git" and not rel.startswith(".git/"):
            return True
        return ".git" in self.entries and _lexists(self.workspace / ".git")

    def _walk(self, root: str) -> list[str]:
        path = self.workspace / root
        found: list[str] = []
        if not _lexists(path):
            return found
        found.append(root)
        if root in {".git", "agent.yaml"} or not stat.S_ISDIR(os.lstat(path).st_mode):
            return found  # .git itself: only whether it is a file, a link or a directory
        for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
            for name in dirnames + filenames:
                rel = os.path.relpath(os.path.join(dirpath, name), self.workspace)
                if len(found) >= _MAX_ENTRIES:
                    self.skipped.append(rel)
                    continue
                found.append(rel)
        return found


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def _read(path: Path) -> _Entry | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return _Entry("link", 0, os.readlink(path).encode("utf-8", "surrogateescape"))
    if stat.S_ISDIR(info.st_mode):
        return _Entry("dir", stat.S_IMODE(info.st_mode))
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_FILE_BYTES:
        return _Entry("other", stat.S_IMODE(info.st_mode), str(info.st_size).encode())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return _Entry("other", stat.S_IMODE(info.st_mode))
    with os.fdopen(fd, "rb") as f:
        return _Entry("file", stat.S_IMODE(info.st_mode), f.read(_MAX_FILE_BYTES + 1))


def _remove(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, ignore_errors=True)  # rmtree never follows symlinks
    else:
        path.unlink(missing_ok=True)
    return True


def _real_directory(workspace: Path, rel: str) -> None:
    """Make every parent of ``rel`` a real directory inside the workspace (links removed)."""
    current = workspace
    for part in Path(rel).parts[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            continue
        if not stat.S_ISDIR(info.st_mode):  # a link or file where a directory was
            current.unlink()
            os.mkdir(current, 0o755)


def _put_back(workspace: Path, rel: str, entry: _Entry) -> None:
    path = workspace / rel
    _real_directory(workspace, rel)
    existing = _read(path)
    if existing is not None and existing.kind != entry.kind:
        _remove(path)
    if entry.kind == "link":
        os.symlink(entry.data.decode("utf-8", "surrogateescape"), path)
    elif entry.kind == "dir":
        if existing is None or existing.kind != "dir":
            os.mkdir(path, entry.mode)
        os.chmod(path, entry.mode, follow_symlinks=False)
    elif entry.kind == "file":
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, entry.mode)
        with os.fdopen(fd, "wb") as f:
            f.write(entry.data)
        os.chmod(path, entry.mode)
