"""Mending a damaged session file before appending to it, so new records are never hidden.

Damaged lines move to a side file (``<id>.jsonl.damaged-<time>``, mode 0600) and the live file
is rewritten without them, through a temporary file renamed over it: a crash leaves either the
old file or the mended one, never a mix. A torn last line (the agent stopped while writing it)
is cut. Every valid record stays in the live file, in order. The caller holds the session lock.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sessions.scan import DamagedLine, ScannedFile
from sessions.storage import fsync_directory, open_file, storage_error, write_all


def mend(path: Path, data: bytes, scanned: ScannedFile, now: float) -> None:
    """Make ``path`` (whose content ``data`` gave ``scanned``) hold only its valid lines.

    Adds a warning naming the side file to ``scanned.warnings``.

    Raises:
        SessionError: the file or the side file cannot be written.
    """
    if scanned.damaged_lines:
        aside = path.with_name(f"{path.name}.damaged-{int(now)}")
        _append_lines(aside, scanned.damaged_lines)
        parts = _kept_parts(data, scanned)
        if scanned.header_rebuilt:  # the file starts with a header again
            parts.insert(0, memoryview(scanned.header.model_dump_json().encode() + b"\n"))
        _rewrite(path, parts)
        scanned.warnings.append(f"the damaged lines were moved to {aside}")
    elif scanned.size > scanned.end:
        fd = open_file(path, os.O_WRONLY, "cut the torn last line of session file")
        try:
            os.ftruncate(fd, scanned.end)
            os.fsync(fd)
        except OSError as error:
            raise storage_error("cut the torn last line of session file", path, error) from None
        finally:
            os.close(fd)


def _kept_parts(data: bytes, scanned: ScannedFile) -> list[memoryview]:
    view = memoryview(data)
    parts: list[memoryview] = []
    start = 0
    for line in scanned.damaged_lines:
        parts.append(view[start : line.offset])
        start = line.offset + len(line.content) + 1
    parts.append(view[start : scanned.end])
    return parts


def _append_lines(aside: Path, lines: list[DamagedLine]) -> None:
    action = "set damaged lines aside in"
    fd = open_file(aside, os.O_WRONLY | os.O_CREAT | os.O_APPEND, action)
    try:
        write_all(fd, b"".join(line.content + b"\n" for line in lines))
        os.fsync(fd)
    except OSError as error:
        raise storage_error(action, aside, error) from None
    finally:
        os.close(fd)


def _rewrite(path: Path, parts: list[memoryview]) -> None:
    temporary = path.with_name(f".{path.name}.mending")
    action = "rewrite session file"
    fd = open_file(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, action)
    try:
        try:
            for part in parts:
                write_all(fd, part)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise storage_error(action, path, error) from None
    fsync_directory(path.parent)
