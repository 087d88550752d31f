"""The OS edge of the session store: files opened without following links, errors as sentences.

Everything under ``$AGENT_HOME/sessions`` is opened with ``O_NOFOLLOW``, so a session or lock
file that is a symbolic link is refused instead of read, appended to or truncated wherever it
points. Every `OSError` becomes a `SessionError` whose message is one sentence: what could not
be done, to which path, why, and what to do about it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from sessions.errors import SessionError

FILE_MODE = 0o600
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC

# Most specific first; the first errno that matches gives the advice.
_ADVICE: tuple[tuple[frozenset[int], str], ...] = (
    (frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG}), "free some disk space"),
    (frozenset({errno.EROFS}), "the file system is read-only; set AGENT_HOME to a writable place"),
    (frozenset({errno.EACCES, errno.EPERM}), "check its permissions or set AGENT_HOME elsewhere"),
    (
        frozenset({errno.ENOTDIR}),
        "a part of that path is a file, not a directory; check AGENT_HOME",
    ),
    (frozenset({errno.EISDIR}), "move that directory out of the way"),
    (frozenset({errno.EEXIST}), "a file is in the way; move it or set AGENT_HOME elsewhere"),
)


def storage_error(action: str, path: Path, error: OSError) -> SessionError:
    """One sentence saying that ``action`` failed on ``path``, why, and what to do."""
    if error.errno == errno.ELOOP:  # O_NOFOLLOW's refusal; the kernel's own text misleads
        return SessionError(
            f"cannot {action} {path}: it is a symbolic link, which agent refuses to follow; "
            "put the file itself there"
        )
    reason = error.strerror or str(error)
    advice = next((text for codes, text in _ADVICE if error.errno in codes), "")
    return SessionError(f"cannot {action} {path}: {reason}" + (f"; {advice}" if advice else ""))


def open_file(path: Path, flags: int, action: str) -> int:
    """``os.open`` without following a final symbolic link, refusing anything but a file.

    Raises:
        SessionError: the file cannot be opened, is a link, or is not a regular file.
    """
    try:
        # O_NONBLOCK: a FIFO planted at the path must not hang the open.
        fd = os.open(path, flags | _NOFOLLOW | os.O_NONBLOCK, FILE_MODE)
    except OSError as error:
        raise storage_error(action, path, error) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SessionError(f"cannot {action} {path}: it is not a regular file; move it away")
        if flags & os.O_CREAT:
            os.fchmod(fd, FILE_MODE)  # the umask may only narrow the mode; make it exact
        os.set_blocking(fd, True)
    except OSError as error:
        os.close(fd)
        raise storage_error(action, path, error) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: Path) -> bytes:
    """The whole content of the regular file at ``path`` (not followed if it is a link).

    Raises:
        SessionError: it cannot be read.
    """
    fd = open_file(path, os.O_RDONLY, "read session file")
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as error:
        raise storage_error("read session file", path, error) from None
    finally:
        os.close(fd)


def write_all(fd: int, payload: bytes | memoryview) -> None:
    """Write every byte of ``payload`` (``os.write`` may write less than asked)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def fsync_directory(directory: Path) -> None:
    """Make new or renamed entries of ``directory`` durable, not only their contents.

    Raises:
        SessionError: the directory cannot be opened or synced.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise storage_error("sync directory", directory, error) from None
