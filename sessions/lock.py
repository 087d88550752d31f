"""One writer per session, enforced by an advisory ``flock`` on ``<id>.lock``.

The kernel drops a ``flock`` when its holder exits, however it exits (``kill -9`` included),
so a crash can never leave a session stuck. A clean release removes the lock file (a crash
leaves it behind, which is harmless: holding the lock, not the file, is what counts); it is
removed while still locked, and a lock taken on a file that was removed meanwhile is taken
again on the new one, so two processes never both hold a session. Locks are advisory and
local: two machines sharing the sessions directory over NFS are not protected. A lock file that
is a symbolic link or not a regular file is refused with a clear `SessionError`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from sessions.errors import SessionLocked
from sessions.storage import open_file, storage_error


class SessionLock:
    """An exclusive lock on one session, held until `release` (or the process ends)."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, path: Path, session_id: str) -> SessionLock:
        """Take the lock at ``path`` without waiting.

        Raises:
            SessionLocked: another process holds it; the message names that process.
            SessionError: the lock file cannot be opened (a link, a directory, no permission).
        """
        for _ in range(_TRIES):
            fd = cls._locked(path, session_id)
            if _still_at(fd, path):
                break
            os.close(fd)  # its holder removed the file as it let go: lock the new one
        else:
            raise storage_error(
                f"lock session {session_id} with", path, OSError("the lock file keeps changing")
            )
        with contextlib.suppress(OSError):  # only shown to a second process; a full disk is fine
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(fd, path)

    @staticmethod
    def _locked(path: Path, session_id: str) -> int:
        fd = open_file(path, os.O_RDWR | os.O_CREAT, f"lock session {session_id} with")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise SessionLocked(
                f"session {session_id} is open in another agent process{holder}. "
                "Finish or quit it there, or start a new session."
            ) from None
        except OSError as error:
            os.close(fd)
            raise storage_error(f"lock session {session_id} with", path, error) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up (no error if already released)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if _still_at(fd, self.path):  # removed while held: no one can lock it meanwhile
                with contextlib.suppress(OSError):
                    self.path.unlink()
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


_TRIES = 5
"""Times a lock is taken again because the file was replaced meanwhile."""


def _still_at(fd: int, path: Path) -> bool:
    """Whether ``path`` is still the file open as ``fd`` (not removed, not replaced)."""
    try:
        here, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
