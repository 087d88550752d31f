"""The session store: one append-only JSONL file per session under ``<root>/sessions/``.

Layout: ``<id>.jsonl`` (0600; a header line, then one record per line) and ``<id>.lock``.
Concurrency: a session has at most one writer. `SessionStore.open` takes an exclusive
``flock`` on ``<id>.lock`` and a second process is refused with `SessionLocked`; the kernel
releases the lock when the holder dies, even by ``kill -9``, so a crash never leaves a session
stuck. Reading (`load`, `list`) takes no lock. Files are never followed through symbolic links,
and every storage failure is a `SessionError` with a one-sentence message.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from sessions.errors import AmbiguousSession, SessionError, SessionNotFound
from sessions.files import DEFAULT_HASH_LIMIT, PathResolver
from sessions.ids import is_session_id, new_session_id, normalize_prefix
from sessions.images import ImageFiles
from sessions.listing import SessionSummary, summarize
from sessions.loaded import LoadedSession, build_session
from sessions.lock import SessionLock
from sessions.mend import mend
from sessions.records import Header
from sessions.redact import Redactor
from sessions.scan import collector_paused, scan_bytes, scan_file
from sessions.storage import fsync_directory, open_file, read_file, storage_error
from sessions.syncer import SYNC_INTERVAL
from sessions.writer import SessionWriter

SUFFIX = ".jsonl"
_DIR_MODE = 0o700


class SessionStore:
    """Creates, finds, opens and lists sessions under ``root / "sessions"``.

    Args:
        root: The agent's data directory (``$AGENT_HOME``).
        clock: Seconds since the epoch; injected for tests.
        redactor: Hides secrets before records reach the disk (default: from ``os.environ``).
        fsync: fsync every record before an append returns (turn off only for throwaway data).
        sync_interval: Least seconds between two background fsyncs of one session's groups
            (`PacedSync`).
        hash_limit: Files larger than this many bytes are compared by size and mtime only.
        resolve_path: How the tools resolve a path argument in the workspace, so the files a
            session records are the ones its tools touched (default: ``realpath`` under the
            session's directory).
    """

    def __init__(
        self,
        root: Path,
        *,
        clock: Callable[[], float] = time.time,
        redactor: Redactor | None = None,
        fsync: bool = True,
        hash_limit: int = DEFAULT_HASH_LIMIT,
        sync_interval: float = SYNC_INTERVAL,
        resolve_path: PathResolver | None = None,
    ) -> None:
        self.directory = root / "sessions"
        self.images = ImageFiles(root / "images", fsync=fsync)
        """The sessions' images, by content (`sessions.images`)."""
        self._resolve_path = resolve_path
        self._sync_interval = sync_interval
        self._clock = clock
        self._redactor = redactor if redactor is not None else Redactor.from_environ()
        self._fsync = fsync
        self._hash_limit = hash_limit

    def create(
        self,
        *,
        cwd: Path,
        model_chain: list[str],
        parent: str | None = None,
        parent_tool_use_id: str | None = None,
    ) -> SessionWriter:
        """Start a new session in ``cwd`` and return its (locked) writer.

        ``parent`` and ``parent_tool_use_id``: a sub-agent's transcript names the session
        and the `task` call that started it; listings leave it out.

        Raises:
            SessionError: the session cannot be stored (the message says why and what to do).
        """
        self._ensure_directory()
        now = self._clock()
        session_id = new_session_id(now)
        path = self._path(session_id)
        lock = SessionLock.acquire(self._lock_path(session_id), session_id)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
            fd = open_file(path, flags, "create session file")
        except BaseException:
            lock.release()
            raise
        writer = self._writer(session_id, path, fd, lock, cwd)
        header = Header(
            ts=now,
            id=session_id,
            cwd=str(cwd),
            model_chain=list(model_chain),
            parent=parent,
            parent_tool_use_id=parent_tool_use_id,
        )
        try:
            writer.append_record(header)
            fsync_directory(self.directory)
        except SessionError:
            writer.close()
            with contextlib.suppress(OSError):  # a file without its header is no session
                path.unlink()
            raise
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
        """Read a session without locking it (to show it, or to list its last exchange).

        Damaged lines are skipped (and reported in ``warnings``); the file is not changed.
        Like `open`, it exempts what it built from the garbage collector: turning the
        collector back on with a million young objects cost a collection of all of them.
        """
        session_id = self.resolve(prefix)
        path = self._path(session_id)
        with collector_paused(freeze=True):
            return self._with_images(build_session(scan_file(path), path, self._hash_limit))

    def open(self, prefix: str) -> tuple[LoadedSession, SessionWriter]:
        """Lock a session, load it, and return a writer that appends to the same file.

        The file is mended first: damaged lines move to a ``.damaged-<time>`` side file and a
        torn last line is cut, every valid record stays. A tool call that never got a result
        is saved with its synthetic result. The loaded session is exempted from the garbage
        collector (see `collector_paused`).

        Raises:
            SessionLocked: another process has the session open.
            SessionError: it cannot be read or written (the message says why).
        """
        session_id = self.resolve(prefix)
        path = self._path(session_id)
        lock = SessionLock.acquire(self._lock_path(session_id), session_id)
        try:
            with collector_paused(freeze=True):
                loaded, fd = self._load_for_writing(path)
        except BaseException:
            lock.release()
            raise
        loaded = self._with_images(loaded)
        writer = self._writer(session_id, path, fd, lock, Path(loaded.header.cwd))
        if loaded.unsaved_tail is not None:
            writer.append_message(loaded.unsaved_tail)
            loaded.messages.append(loaded.unsaved_tail)
            loaded.unsaved_tail = None
        return loaded, writer

    def _load_for_writing(self, path: Path) -> tuple[LoadedSession, int]:
        data = read_file(path)
        scanned = scan_bytes(path, data)
        if scanned.damaged:
            mend(path, data, scanned, self._clock())
        del data
        fd = open_file(path, os.O_WRONLY | os.O_APPEND, "open session file for writing")
        try:
            return build_session(scanned, path, self._hash_limit), fd
        except BaseException:
            os.close(fd)
            raise

    def _with_images(self, loaded: LoadedSession) -> LoadedSession:
        """``loaded`` with the images of its view read back; one that cannot be is a note,
        and a warning says so."""
        if any(message.images for message in loaded.view):
            loaded.view, missing = self.images.restore(loaded.view)
            loaded.warnings += missing
        return loaded

    def list(self) -> list[SessionSummary]:
        """Summaries of every readable session a person started (sub-agents' transcripts
        left out), most recently updated first."""
        summaries = [s for s in map(summarize, self._paths()) if s is not None and not s.parent]
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
            sync_interval=self._sync_interval,
            hash_limit=self._hash_limit,
            images=self.images,
            resolve_path=self._resolve_path,
        )

    def _ensure_directory(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
        except OSError as error:
            raise storage_error("create the sessions directory", self.directory, error) from None

    def _ids(self) -> builtins.list[str]:
        return sorted(path.name.removesuffix(SUFFIX) for path in self._paths())

    def _paths(self) -> builtins.list[Path]:
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []  # nothing saved yet
        except OSError as error:
            raise storage_error("list the sessions in", self.directory, error) from None
        return [
            self.directory / name
            for name in names
            if name.endswith(SUFFIX) and is_session_id(name.removesuffix(SUFFIX))
        ]

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}{SUFFIX}"

    def _lock_path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.lock"
