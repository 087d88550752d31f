"""File operations confined to one directory tree that never follow a symlink.

Every operation starts from a descriptor of the root and opens each directory on the way with
``O_NOFOLLOW`` relative to its parent (``openat``), so a directory swapped for a symlink, even
while the operation runs, makes it fail instead of acting outside the tree. The last path
component is never followed either: it is opened with ``O_NOFOLLOW``, replaced by ``rename``
and removed by ``unlink``, which act on a symlink itself, not on what it points to.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tools.guard import file_words as words

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1024 * 1024
Sink = Callable[[bytes], None]


class Unreachable(OSError):
    """A path cannot be reached safely (it leaves the tree, or a directory on the way is a
    symlink or not a directory); the message says which part. ``missing`` when a directory
    on the way does not exist (so neither does the path)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class FileState:
    """What is at a path: a regular file (sha256 of its bytes and its permission bits) or a
    symlink (sha256 of its target)."""

    kind: Literal["file", "symlink"]
    digest: str
    mode: int = 0o644

    def same_content(self, other: object) -> bool:
        return (
            isinstance(other, FileState) and other.kind == self.kind and other.digest == self.digest
        )


@dataclass(frozen=True)
class Other:
    """Something at a path that is neither a regular file nor a symlink (a directory, a FIFO)."""

    what: str


Observed = FileState | Other | None
"""The state at a path; None when nothing is there."""


def split_relative(rel: str) -> list[str]:
    """The components of a relative POSIX path, refusing anything that could leave the root."""
    if not rel or "\x00" in rel or rel.startswith("/"):
        raise Unreachable(words.not_relative(rel))
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise Unreachable(words.not_relative(rel))
    return parts


@contextlib.contextmanager
def open_parent(root: Path, parts: list[str], *, create: bool) -> Iterator[int]:
    """A descriptor of the directory holding ``parts[-1]``, reached without following links.

    Missing directories are made when ``create`` is true.

    Raises:
        Unreachable: a directory on the way is a symlink, not a directory, or missing.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate(parts[:-1]):
            child = _enter(fd, name, create, "/".join(parts[: depth + 1]))
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _enter(parent: int, name: str, create: bool, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise Unreachable(words.not_found(shown, "directory"), missing=True) from None
    except OSError as exc:
        # ELOOP: a symlink (O_NOFOLLOW); ENOTDIR: a file where a directory should be.
        raise Unreachable(words.not_a_directory(shown, exc.strerror)) from None
    try:
        os.mkdir(name, 0o777, dir_fd=parent)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        raise Unreachable(words.cannot("create directory", shown, exc.strerror)) from None


def observe(dir_fd: int, name: str, sink: Sink | None = None) -> Observed:
    """The state of ``name`` in ``dir_fd``, hashing (and feeding ``sink``) a file's bytes."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(name, dir_fd=dir_fd))
        if sink is not None:
            sink(target)
        return FileState("symlink", hashlib.sha256(target).hexdigest(), 0o777)
    if not stat.S_ISREG(info.st_mode):
        return Other(words.describe_mode(info.st_mode))
    # O_NONBLOCK: a FIFO swapped in after the lstat must not hang the open.
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return Other(words.describe_mode(opened.st_mode))
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            if sink is not None:
                sink(chunk)
        return FileState("file", digest.hexdigest(), stat.S_IMODE(opened.st_mode))
    finally:
        os.close(fd)


def remove(dir_fd: int, name: str, current: Observed) -> None:
    """Remove a file or symlink (never what a symlink points to); an empty directory too."""
    if isinstance(current, Other):
        os.rmdir(name, dir_fd=dir_fd)  # fails unless it is an empty directory
    elif current is not None:
        os.unlink(name, dir_fd=dir_fd)


def materialize(
    dir_fd: int, name: str, state: FileState, content: Iterator[bytes], *, replace: bool
) -> None:
    """Put ``state`` (with ``content``) at ``name``: atomically over what is there when
    ``replace``, else only if nothing is there (``FileExistsError``)."""
    temp = f".{name[:200]}.agent-undo-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp, dir_fd=dir_fd)
    if state.kind == "symlink":
        os.symlink(os.fsdecode(b"".join(content)), temp, dir_fd=dir_fd)
    else:
        _write_new(dir_fd, temp, state.mode, content)
    try:
        if replace:
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)


def _write_new(dir_fd: int, name: str, mode: int, content: Iterator[bytes]) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    try:
        for chunk in content:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        os.fchmod(fd, mode & 0o7777)
    finally:
        os.close(fd)
