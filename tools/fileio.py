"""Blocking file I/O for the file tools: regular files only, and never more than asked for.

Every open uses ``O_NONBLOCK`` and checks the opened descriptor with ``fstat``: a FIFO,
device or socket put in the workspace (or swapped in between a check and the open) is
refused instead of blocking a worker thread forever. Reads are bounded: lines are streamed
so ``offset``/``limit`` never load a whole file, and each line is cut at a byte limit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from tools.base import ErrorCategory, FileSeen, ToolError
from tools.guard import file_words as words
from tools.text import SNIFF_BYTES, decode, is_binary

MAX_LINE_BYTES = 4_096
"""Bytes of one line that read_file shows; minified files have megabyte-long lines."""
MAX_WHOLE_FILE_BYTES = 32 * 1024 * 1024
"""edit_file, search and approval diffs read whole files; larger ones are refused or skipped."""
_COUNT_AHEAD_BYTES = 4 * 1024 * 1024
"""After the lines asked for, read this much more to tell the model the file's line count."""
_SPLIT_BYTES = 256 * 1024
SEEN_HASH_BYTES = 8 * 1024 * 1024
"""The largest write whose hash is handed over (`FileSeen`); a larger file is looked at by
whoever needs its state, who may hash it or not."""
"""read_file takes a file up to this size whole and splits it, rather than read it by line."""
_MISSING_HINT = "check the name with list_files (e.g. pattern '**/*.py') or search for it"
_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def not_regular(shown: str, mode: int, *, hint: str = "use list_files") -> ToolError:
    """The error for a path that exists but is not a regular file (``hint``: for a directory)."""
    if stat.S_ISDIR(mode):
        return ToolError(words.not_a_file(shown, mode), hint=hint)
    return ToolError(
        f"{words.not_a_file(shown, mode)}; file tools only work on regular files",
        hint="use run_command if you really need to read from it, with a timeout",
    )


def _os_error(exc: OSError, shown: str, doing: str) -> ToolError:
    if isinstance(exc, FileNotFoundError):
        return ToolError(words.not_found(shown), hint=_MISSING_HINT)
    if isinstance(exc, PermissionError):
        return ToolError(words.permission_denied(doing, shown))
    if isinstance(exc, BlockingIOError):  # a file locked by another process
        return ToolError(words.busy(shown, exc), category=ErrorCategory.TRANSIENT)
    return ToolError(words.cannot(doing.removesuffix("ing"), shown, exc.strerror or exc))


def existing_mode(path: Path) -> int | None:
    """The ``lstat`` mode of ``path``, or None if nothing is there."""
    try:
        return path.lstat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def open_regular(path: Path, shown: str, flags: int = os.O_RDONLY) -> int:
    """A descriptor of the regular file ``path``; anything else raises `ToolError`.

    Checked before opening (opening a device can have effects) and again on the open
    descriptor, so a file replaced by a FIFO in between cannot block.
    """
    doing = "reading" if flags & os.O_ACCMODE == os.O_RDONLY else "writing"
    try:
        mode = path.lstat().st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(shown, mode)
        fd = os.open(path, flags | _OPEN_FLAGS)
    except OSError as exc:
        raise _os_error(exc, shown, doing) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(shown, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_whole(path: Path, shown: str, limit: int = MAX_WHOLE_FILE_BYTES) -> bytes:
    """All bytes of a regular file no larger than ``limit``."""
    fd = open_regular(path, shown)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ToolError(
            f"{shown} is larger than {limit // (1024 * 1024)} MB, too large to handle whole",
            hint="read parts of it with read_file offset/limit, or use run_command",
        )
    return data


@dataclass(frozen=True)
class LineWindow:
    """Lines ``offset``… of a file, as read_file shows them."""

    lines: list[str]
    total: int | None
    """Lines in the file, when the read reached its end."""
    more: bool
    """Whether lines follow the window."""
    binary_head: bytes | None = None
    """The file's first bytes, set (and ``lines`` empty) when the file looks binary."""
    size: int = 0
    seen: FileSeen | None = None
    """The file as read, when it was read whole."""


def read_window(path: Path, shown: str, offset: int, limit: int) -> LineWindow:
    """Lines ``offset`` to ``offset + limit - 1`` (1-based), streamed; long lines cut."""
    fd = open_regular(path, shown)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())  # before the read, as a later look compares with it
        size = info.st_size
        head = handle.read(SNIFF_BYTES)
        if is_binary(head):
            return LineWindow([], None, False, binary_head=head, size=size)
        if size <= _SPLIT_BYTES:
            whole = head + handle.read(_SPLIT_BYTES + 1 - len(head))
            window = _split_window(whole, offset, limit, size)
            if window is not None and len(whole) == size:
                digest = hashlib.sha256(whole).hexdigest()
                return replace(window, seen=FileSeen(path, size, info.st_mtime_ns, digest))
            if window is not None:
                return window
        handle.seek(0)
        return _stream_window(handle, offset, limit, size)


def _stream_window(handle: BinaryIO, offset: int, limit: int, size: int) -> LineWindow:
    """The window read line by line from the start of ``handle`` (a file of any size)."""
    chosen: list[str] = []
    number = 0
    for number, line in enumerate(_lines(handle), start=1):
        if number >= offset + limit:
            total = _count_rest(handle, number)
            return LineWindow(chosen, total, True, size=size)
        if number >= offset:
            chosen.append(line)
    return LineWindow(chosen, number, False, size=size)


def _split_window(data: bytes, offset: int, limit: int, size: int) -> LineWindow | None:
    """The window of a small file read whole, split in C rather than line by line as
    `_lines` reads (what it would give); None for what only `_lines` handles: a line over
    `MAX_LINE_BYTES`, or a file that grew past `_SPLIT_BYTES` since its size was taken."""
    if len(data) > _SPLIT_BYTES:
        return None
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()  # the file ends with a newline (or is empty)
    if max(map(len, lines), default=0) > MAX_LINE_BYTES:
        return None
    chosen = [decode(line.removesuffix(b"\r")) for line in lines[offset - 1 : offset - 1 + limit]]
    return LineWindow(chosen, len(lines), len(lines) >= offset + limit, size=size)


def _lines(handle: BinaryIO) -> Iterator[str]:
    """Each line without its ending, cut at `MAX_LINE_BYTES`; the rest of a long line skipped."""
    while chunk := handle.readline(MAX_LINE_BYTES + 1):
        cut = not chunk.endswith(b"\n") and len(chunk) > MAX_LINE_BYTES
        skipped = 0
        while cut:  # skip the rest of the line without keeping it
            rest = handle.readline(1 << 16)
            skipped += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        text = decode(chunk[:MAX_LINE_BYTES].rstrip(b"\n").removesuffix(b"\r"))
        if cut:
            text += f" [... line cut at {MAX_LINE_BYTES:,} bytes]"
        yield text


def _count_rest(handle: BinaryIO, counted: int) -> int | None:
    """The file's line count if its end is near; None for a file that goes on and on."""
    data = handle.read(_COUNT_AHEAD_BYTES + 1)
    if len(data) > _COUNT_AHEAD_BYTES:
        return None
    return counted + data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


def write_regular(path: Path, shown: str, data: bytes) -> FileSeen | None:
    """Replace the content of ``path`` (created if missing; parent directories too); the file
    as written, when its hash is cheap to give (`SEEN_HASH_BYTES`)."""
    mode = existing_mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        raise not_regular(shown, mode)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _OPEN_FLAGS, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise not_regular(shown, stat.S_IFIFO) from None  # a FIFO appeared meanwhile
        raise _os_error(exc, shown, "writing") from None
    try:
        opened = os.fstat(fd).st_mode
        if not stat.S_ISREG(opened):
            raise not_regular(shown, opened)
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        written = os.fstat(fd)  # after the write: its time is the file's now
    except OSError as exc:
        raise _os_error(exc, shown, "writing") from None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    if written.st_size != len(data) or len(data) > SEEN_HASH_BYTES:
        return None
    return FileSeen(path, written.st_size, written.st_mtime_ns, hashlib.sha256(data).hexdigest())
