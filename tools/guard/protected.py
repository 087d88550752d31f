"""Protected paths: files in the workspace that run code or change the agent's own rules.

Which they are is found from the files themselves (`tools.guard.protected_scan`): every git
directory's configuration and hooks (nested repositories, submodules, linked worktrees, and
a ``.git`` file pointing elsewhere), what that configuration names (``core.hooksPath``,
included files, files its commands run), ``.gitattributes``, the agent's and Claude Code's
configuration and the files their hooks run. A change to any of them runs code on the
person's next git command or the agent's next hook, outside every sandbox, or changes what
the agent may do. File tools ask the person before writing any of them, or anything else in
a ``.git`` directory but objects and refs, and refuse to write a file that is one of them
under another name (`aliased`); the namespace layer mounts them read-only;
`ProtectedSnapshot` undoes any change a command still made to them. Nothing here follows a
symlink.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard.protected_scan import (
    AGENT,
    AGENT_ROOTS,
    ATTRIBUTES,
    CLAUDE,
    CLAUDE_ROOTS,
    GIT,
    GIT_CONFIG,
    ProtectedPaths,
    Root,
    scan_cached,
)

_GIT_DATA = frozenset({"objects", "refs"})
"""What a git directory holds besides configuration: written by every commit, run by nobody."""
_UNREAD_DIRS = frozenset({"objects", "refs", "logs", "lfs"})
"""Directories of a submodule's or worktree's git directory the put-back leaves alone (its
history can be large; git runs nothing from it)."""
_MAX_FILE_BYTES = 1 << 20
_MAX_ENTRIES = 2_000
REUSE_SECONDS = 2.0
"""How long a scan's answer serves the file tools' question and a command's launch."""


def named_reason(parts: list[str]) -> str | None:
    """Why a path is protected by its name alone (``parts`` relative and case-folded)."""
    if not parts:
        return None
    if ".git" in parts:
        at = parts.index(".git")
        if at == len(parts) - 1 or parts[at + 1] in GIT_CONFIG:
            return GIT
        if parts[at + 1] not in _GIT_DATA:
            return "git reads it; only objects and refs are written without asking"
    if parts[-1] == ".gitattributes":
        return ATTRIBUTES
    rel = "/".join(parts)
    for roots, reason in ((AGENT_ROOTS, AGENT), (CLAUDE_ROOTS, CLAUDE)):
        if any(rel == root or rel.startswith(root + "/") for root in roots):
            return reason
    return None


def protected_reason(workspace: Path, path: Path, commands: Iterable[str] = ()) -> str | None:
    """Why writing ``path`` (inside ``workspace``) needs the person's say-so, or None.

    ``commands`` are the agent's hook commands (the files they name are protected). Scans
    the workspace (bounded; an answer up to `REUSE_SECONDS` old is reused): call it off the
    event loop.
    """
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return None
    parts = [p.casefold() for p in rel.parts]
    reason = named_reason(parts)
    if reason is not None or not parts:
        return reason
    found = scan_cached(workspace, commands, max_age=REUSE_SECONDS)
    for candidate in {rel.as_posix(), _real_rel(workspace, path)} - {None}:
        assert candidate is not None
        if (reason := found.reason(candidate)) is not None:
            return reason
    return None


def _real_rel(workspace: Path, path: Path) -> str | None:
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(workspace))
    return None if rel == ".." or rel.startswith(".." + os.sep) else rel.replace(os.sep, "/")


def aliased(workspace: Path, path: Path, commands: Iterable[str] = ()) -> str | None:
    """Why writing ``path`` in place would change a protected file under another name, or None.

    A hard link (``ln .git/config cfg``) or a bind mount of a protected file has another name
    and the same (device, inode); a file with more than one link is refused even when the
    other name is not known to be protected, since writing it in place changes them all.
    """
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    if protected_reason(workspace, path, commands) is None:
        for rel in _files_of(workspace, commands):
            with contextlib.suppress(OSError):
                other = os.lstat(workspace / rel)
                if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                    return f"it is the protected file {rel} under another name"
    if info.st_nlink > 1:
        return (
            f"it has {info.st_nlink} hard links, and writing it in place would change every "
            "other name too"
        )
    return None


def _files_of(workspace: Path, commands: Iterable[str]) -> list[str]:
    """The protected files and the files in protected directories (not their subtrees)."""
    found: list[str] = []
    for root in scan_cached(workspace, commands, max_age=REUSE_SECONDS).roots:
        path = workspace / root.rel
        if root.whole and os.path.isdir(path) and not os.path.islink(path):
            with contextlib.suppress(OSError):
                names = sorted(os.listdir(path))[:_MAX_ENTRIES]
                found += [f"{root.rel}/{name}" for name in names]
        elif os.path.lexists(path):
            found.append(root.rel)
    return found


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
    found: ProtectedPaths = field(default_factory=lambda: ProtectedPaths((), ()))

    @classmethod
    def take(cls, workspace: Path, commands: Iterable[str] = ()) -> ProtectedSnapshot:
        """Scan the workspace afresh (``commands``: the agent's hook commands) and keep the
        state of every protected path."""
        snapshot = cls(workspace, found=scan_cached(workspace, commands, max_age=0))
        for root in snapshot.found.outermost():
            for rel in snapshot._walk(root):
                entry = _read(workspace / rel)
                if entry is not None:
                    snapshot.entries[rel] = entry
        return snapshot

    def names(self) -> tuple[str, ...]:
        """The protected paths found (workspace-relative), for telling a refusal apart."""
        return tuple(root.rel for root in self.found.roots)

    def restore(self) -> list[str]:
        """Undo changes made since `take`; returns the relative paths put back or removed."""
        changed: list[str] = []
        current = {rel for root in self.found.outermost() for rel in self._walk(root)}
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
        for git_dir in self.found.git_dirs:
            if rel == git_dir or rel.startswith(git_dir + "/"):
                return git_dir in self.entries and _lexists(self.workspace / git_dir)
        return True

    def _walk(self, root: Root) -> list[str]:
        path = self.workspace / root.rel
        found: list[str] = []
        if not _lexists(path):
            return found
        found.append(root.rel)
        if not root.whole or not stat.S_ISDIR(os.lstat(path).st_mode):
            return found  # a git directory itself: only whether it is a file, link or dir
        history = os.path.dirname(root.rel) in self.found.git_dirs and root.rel.endswith(
            ("/modules", "/worktrees")
        )
        for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
            if history:
                dirnames[:] = [name for name in dirnames if name not in _UNREAD_DIRS]
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
