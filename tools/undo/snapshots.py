"""Snapshots of the workspace around a shell command, so what it changed can be undone.

Before each ``run_command`` the workspace's files (what ``.gitignore`` does not exclude) are
saved by content into the session's blob store; after it, a second scan finds what the
command deleted, modified or created. A file whose size, times, inode and mode are unchanged
since the last scan is not read again, so a scan of an unchanged repository costs one
``lstat`` per file. Symlinks are saved as links and never followed; the walk opens each
directory relative to its parent with ``O_NOFOLLOW``.

Limits (`SnapshotLimits`) keep this cheap: files larger than ``max_file_bytes`` and files
past the ``max_total_bytes`` budget are not saved, and the walk stops after ``max_files``.
Changes to files that were not saved are reported as not undoable.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tools.guard.safe_fs import FileState, Unreachable, observe, open_parent, split_relative
from tools.ignore import GitIgnore
from tools.undo.checkpoint_files import BlobStore

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_DEPTH = 64
_MAX_GITIGNORE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class SnapshotLimits:
    """How much a snapshot may save."""

    max_file_bytes: int = 2 * 1024 * 1024
    max_total_bytes: int = 256 * 1024 * 1024
    max_files: int = 20_000


class ScanAbandoned(Exception):
    """The scan's caller stopped waiting for it (see `WorkspaceScanner.snapshot`)."""


Signature = tuple[int, int, int, int, int]
"""(size, mtime_ns, ctime_ns, inode, mode) from ``lstat``: equal means unchanged."""


@dataclass
class Snapshot:
    """The workspace's files at one moment: saved ones by state, others by signature."""

    files: dict[str, FileState] = field(default_factory=dict)
    unsaved: dict[str, Signature] = field(default_factory=dict)
    complete: bool = True
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Change:
    """One path a command changed: its state before and after (None: absent)."""

    rel: str
    before: FileState | None
    after: FileState | None


@dataclass
class CommandChanges:
    """What a command changed: undoable changes and the paths that cannot be undone."""

    changes: list[Change] = field(default_factory=list)
    not_undoable: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class SafeGitIgnore(GitIgnore):
    """`GitIgnore` that reads ``.gitignore`` files without following symlinks or opening
    FIFOs, and only up to a size limit (a scan must never hang on a crafted workspace)."""

    def _read(self, gitignore: Path) -> str:
        return _read_small(gitignore)


def _read_small(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, _MAX_GITIGNORE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


class WorkspaceScanner:
    """Takes snapshots of one workspace into a blob store, remembering what it already saved."""

    def __init__(self, root: Path, blobs: BlobStore, limits: SnapshotLimits) -> None:
        self.root = root
        self.blobs = blobs
        self.limits = limits
        self._known: dict[str, tuple[Signature, FileState]] = {}

    @property
    def digests(self) -> set[str]:
        """Contents the next scan expects to find saved (kept by garbage collection)."""
        # Copied in one step (atomic under the GIL): a scan abandoned on a hung mount may
        # still be adding to the dict in its thread, and iterating it then would raise.
        return {state.digest for _, state in list(self._known.values())}

    def ignore_rules(self) -> GitIgnore:
        """One rule set for the scans before and after a command, so a command that edits
        ``.gitignore`` does not make files look deleted or created."""
        return SafeGitIgnore(self.root)

    def snapshot(self, ignore: GitIgnore, stop: threading.Event | None = None) -> Snapshot:
        """Save the workspace's files; never raises for one unreadable file or directory.

        Raises:
            ScanAbandoned: ``stop`` was set: the caller gave up waiting (a hung mount), and
                the scan saves nothing more and remembers nothing it found.
        """
        snap = Snapshot()
        stop = stop or threading.Event()
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            snap.complete = False
            snap.notes.append(f"the workspace could not be read ({exc.strerror})")
            return snap
        try:
            self._walk(fd, "", ignore, snap, 0, stop)
        finally:
            os.close(fd)
        return snap

    def _walk(
        self,
        dir_fd: int,
        prefix: str,
        ignore: GitIgnore,
        snap: Snapshot,
        depth: int,
        stop: threading.Event,
    ) -> None:
        try:
            with os.scandir(dir_fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            snap.complete = False
            return
        for entry in entries:
            if stop.is_set():
                raise ScanAbandoned
            if not snap.complete and len(snap.files) + len(snap.unsaved) >= self.limits.max_files:
                return
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if ignore.is_ignored_relative(rel, is_dir=is_dir):
                    continue
                if is_dir:
                    self._enter(dir_fd, entry.name, rel, ignore, snap, depth, stop)
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    self._file(dir_fd, entry, rel, snap, stop)
            except OSError:
                snap.complete = False

    def _enter(
        self,
        dir_fd: int,
        name: str,
        rel: str,
        ignore: GitIgnore,
        snap: Snapshot,
        depth: int,
        stop: threading.Event,
    ) -> None:
        if depth >= _MAX_DEPTH:
            snap.complete = False
            snap.notes.append(f"directories deeper than {_MAX_DEPTH} levels were not saved")
            return
        child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            self._walk(child, rel + "/", ignore, snap, depth + 1, stop)
        finally:
            os.close(child)

    def _file(
        self, dir_fd: int, entry: os.DirEntry[str], rel: str, snap: Snapshot, stop: threading.Event
    ) -> None:
        if len(snap.files) + len(snap.unsaved) >= self.limits.max_files:
            if snap.complete:
                snap.notes.append(f"only the first {self.limits.max_files} files were saved")
            snap.complete = False
            return
        info = entry.stat(follow_symlinks=False)
        signature = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
        known = self._known.get(rel)
        if known is not None and known[0] == signature and known[1].digest in self.blobs:
            snap.files[rel] = known[1]
            return
        too_big = info.st_size > self.limits.max_file_bytes
        if too_big or self.blobs.stored_bytes + info.st_size > self.limits.max_total_bytes:
            snap.unsaved[rel] = signature
            return
        writer = self.blobs.writer()
        try:
            state = observe(dir_fd, entry.name, writer.write)
        except BaseException:
            writer.abort()
            raise
        if not isinstance(state, FileState) or stop.is_set():  # stopped while it read
            writer.abort()
            if stop.is_set():
                raise ScanAbandoned
            return
        writer.commit(state.digest)
        self._known[rel] = (signature, state)
        snap.files[rel] = state

    def changes(self, before: Snapshot, after: Snapshot) -> CommandChanges:
        """What changed between two snapshots taken with the same rules."""
        result = CommandChanges(notes=list(dict.fromkeys(before.notes + after.notes)))
        for rel, old in before.files.items():
            new = after.files.get(rel)
            if new is not None:
                if not new.same_content(old) or new.mode != old.mode:
                    result.changes.append(Change(rel, old, new))
            elif rel in after.unsaved:
                result.not_undoable.append(rel)
            elif after.complete or self._absent(rel):
                result.changes.append(Change(rel, old, None))
        for rel, new in after.files.items():
            if rel not in before.files and rel not in before.unsaved and before.complete:
                result.changes.append(Change(rel, None, new))
        for rel, signature in before.unsaved.items():
            if after.unsaved.get(rel) != signature and (after.complete or rel in after.unsaved):
                result.not_undoable.append(rel)
        for rel in after.unsaved:
            if rel not in before.unsaved and rel not in before.files and before.complete:
                result.not_undoable.append(rel)
        return result

    def _absent(self, rel: str) -> bool:
        try:
            parts = split_relative(rel)
            with open_parent(self.root, parts, create=False) as dir_fd:
                return observe(dir_fd, parts[-1]) is None
        except Unreachable:
            return True  # a directory on the way is gone or is now a symlink
        except OSError:
            return False
