"""What the file tools and the confined file operations say about a path, worded once.

`tools.fileio` (read_file, write_file, edit_file) and `tools.guard.safe_fs` (undo's snapshots
and restores) meet the same situations: nothing at a path, a directory or a FIFO where a file
should be, an open the OS refused. The person and the model read both, so both say them
alike. Only the words live here; each caller adds its own hint.
"""

from __future__ import annotations

import stat

__all__ = [
    "busy",
    "cannot",
    "describe_mode",
    "not_a_directory",
    "not_a_file",
    "not_found",
    "not_relative",
    "permission_denied",
]


def describe_mode(mode: int) -> str:
    """What a non-regular file is (``a directory``, ``a named pipe (FIFO)``, ...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def not_a_file(shown: str, mode: int) -> str:
    """``shown`` exists but is not a regular file (``mode`` says what it is)."""
    if stat.S_ISDIR(mode):
        return f"{shown} is a directory, not a file"
    return f"{shown} is {describe_mode(mode)}, not a regular file"


def not_found(shown: str, what: str = "file") -> str:
    """Nothing is at ``shown`` (``what``: ``file`` or ``directory``)."""
    return f"{what} not found: {shown}"


def not_a_directory(shown: str, reason: object) -> str:
    """A directory on the way to a path is a symlink or a file (checked without following)."""
    return f"{shown} is now a symlink or not a directory ({reason})"


def permission_denied(doing: str, shown: str) -> str:
    """The OS refused ``doing`` (``reading``, ``writing``) ``shown``."""
    return f"permission denied {doing} {shown}"


def busy(shown: str, reason: object) -> str:
    """Another process holds ``shown`` (a lock); trying later may work."""
    return f"{shown} is busy: {reason}"


def cannot(action: str, shown: str, reason: object) -> str:
    """Any other failure to ``action`` (``read``, ``create directory``) ``shown``."""
    return f"cannot {action} {shown}: {reason}"


def not_relative(rel: str) -> str:
    """``rel`` is not a plain relative path (absolute, empty, ``..``, a NUL byte)."""
    return f"{rel!r} is not a plain relative path inside the workspace"
