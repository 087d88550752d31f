"""The session store: one append-only JSONL file per session under ``<root>/sessions/``.

Layout: ``<id>.jsonl`` (0600; a header line, then one record per line) and ``<id>.lock``.
Concurrency: a session has at most one writer. `SessionStore.open` takes an exclusive
``flock`` on ``<id>.lock`` and a second process is refused with `SessionLocked`; the kernel
releases the lock when the holder dies, even by ``kill -9``, so a crash never leaves a session
stuck. Reading (`load`, `list`) takes no lock.
"""

from __future__ import annotations

import builtins
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from sessions.errors import AmbiguousSession, SessionNotFound
from sessions.files import DEFAULT_HASH_LIMIT
from sessions.ids import is_session_id, new_session_id, normalize_prefix
from sessions.loaded import LoadedSession, build_session
from sessions.lock import SessionLock
from sessions.records import Header
from sessions.redact import Redactor
from sessions.scan import ScannedFile, scan_file
from sessions.summary import SessionSummary, summarize
from sessions.writer import SessionWriter

SUFFIX = ".jsonl"
_FILE_MODE = 0o600
_DIR_MODE = 0o700


class SessionStore:
    """Creates, finds, opens and lists sessions under ``root / "sessions"``.

    Args:
        root: The agent's data directory (``$AGENT_HOME``).
        clock: Seconds since the epoch; injected for tests.
        redactor: Hides secrets before records reach the disk (default: from ``os.environ``).
        fsync: fsync every record before an append returns (turn off only for throwaway data).
        hash_limit: Files larger than this many bytes are compared by size and mtime only.
    """

    def __init__(
        self,
        root: Path,
        *,
        clock: Callable[[], float] = time.time,
        redactor: Redactor | None = None,
        fsync: bool = True,
        hash_limit: int = DEFAULT_HASH_LIMIT,
    ) -> None:
        self.directory = root / "sessions"
        self._clock = clock
        self._redactor = redactor if redactor is not None else Redactor.from_environ()
        self._fsync = fsync
        self._hash_limit = hash_limit

    def create(self, *, cwd: Path, model_chain: list[str]) -> SessionWriter:
        """Start a new session in ``cwd`` and return its (locked) writer."""
        self._ensure_directory()
        now = self._clock()
        session_id = new_session_id(now)
        path = self._path(session_id)
        lock = SessionLock.acquire(self._lock_path(session_id), session_id)
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, _FILE_MODE
            )
            os.fchmod(fd, _FILE_MODE)  # the umask may only narrow the mode; make it exact
        except BaseException:
            lock.release()
            raise
        writer = self._writer(session_id, path, fd, lock, cwd)
        header = Header(ts=now, id=session_id, cwd=str(cwd), model_chain=list(model_chain))
        writer.append_record(header)
        _fsync_directory(self.directory)
        return writer

    def resolve(self, prefix: str) -> str:
        """The full id of the one session whose id starts with ``prefix``.

        Raises:
            SessionNotFound: no session matches.
            AmbiguousSession: several do; the message lists them.
        """
        wanted = normalize_prefix(prefix)
        matches = [sid for sid in self._ids() if wanted and sid.startswith(wanted)]
        if not matches:
            raise SessionNotFound(
                f"no saved session matches {prefix!r}; run 'agent sessions' to list them"
            )
        if len(matches) > 1:
            shown = ", ".join(matches[:10]) + (", …" if len(matches) > 10 else "")
            raise AmbiguousSession(
                f"{prefix!r} matches {len(matches)} sessions ({shown}); type more of the id",
                matches,
            )
        return matches[0]

    def load(self, prefix: str) -> LoadedSession:
        """Read a session without locking it (to show it, or to list its last exchange)."""
        session_id = self.resolve(prefix)
        path = self._path(session_id)
        return build_session(scan_file(path), path, self._hash_limit)

    def open(self, prefix: str) -> tuple[LoadedSession, SessionWriter]:
        """Lock a session, load it, and return a writer that appends to the same file.

        Damage found while loading is cut off first (a corrupt middle is kept in a
        ``.damaged-<time>`` copy), so later appends are never hidden behind it; a tool call
        that never got a result is saved with its synthetic result.

        Raises:
            SessionLocked: another process has the session open.
        """
        session_id = self.resolve(prefix)
        path = self._path(session_id)
        lock = SessionLock.acquire(self._lock_path(session_id), session_id)
        try:
            scanned = scan_file(path)
            if scanned.damaged:
                self._cut_damage(path, scanned)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except BaseException:
            lock.release()
            raise
        loaded = build_session(scanned, path, self._hash_limit)
        writer = self._writer(session_id, path, fd, lock, Path(scanned.header.cwd))
        if loaded.unsaved_tail is not None:
            writer.append_message(loaded.unsaved_tail)
            loaded.messages.append(loaded.unsaved_tail)
            loaded.unsaved_tail = None
        return loaded, writer

    def list(self) -> list[SessionSummary]:
        """Summaries of every readable session, most recently updated first."""
        summaries = [s for s in map(summarize, self._paths()) if s is not None]
        return sorted(summaries, key=lambda s: (s.updated, s.id), reverse=True)

    def latest_for(self, cwd: Path) -> str | None:
        """The id of the most recently updated session started in ``cwd`` (for ``--continue``)."""
        wanted = {str(cwd), str(cwd.resolve())}
        for summary in self.list():
            if summary.cwd in wanted:
                return summary.id
        return None

    def _writer(
        self, session_id: str, path: Path, fd: int, lock: SessionLock, cwd: Path
    ) -> SessionWriter:
        return SessionWriter(
            session_id=session_id,
            path=path,
            fd=fd,
            lock=lock,
            cwd=cwd,
            clock=self._clock,
            redactor=self._redactor,
            fsync=self._fsync,
            hash_limit=self._hash_limit,
        )

    def _cut_damage(self, path: Path, scanned: ScannedFile) -> None:
        size = path.stat().st_size
        if size - scanned.valid_size > 0 and _has_complete_line_after(path, scanned.valid_size):
            keep = path.with_name(f"{path.name}.damaged-{int(self._clock())}")
            shutil.copyfile(path, keep)
            os.chmod(keep, _FILE_MODE)
            scanned.warnings.append(f"the damaged file was copied to {keep}")
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, scanned.valid_size)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _ensure_directory(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)

    def _ids(self) -> builtins.list[str]:
        return sorted(path.name.removesuffix(SUFFIX) for path in self._paths())

    def _paths(self) -> builtins.list[Path]:
        if not self.directory.is_dir():
            return []
        return [
            path
            for path in self.directory.iterdir()
            if path.name.endswith(SUFFIX) and is_session_id(path.name.removesuffix(SUFFIX))
        ]

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}{SUFFIX}"

    def _lock_path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.lock"


def _has_complete_line_after(path: Path, offset: int) -> bool:
    with path.open("rb") as handle:
        handle.seek(offset)
        return b"\n" in handle.read()


def _fsync_directory(directory: Path) -> None:
    """Make the new file's directory entry durable, not only its contents."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
