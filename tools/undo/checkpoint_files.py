"""Where checkpoints live on disk: content-addressed copies, an append-only index, pruning.

Layout of one session's directory (0700, files 0600), ``$AGENT_HOME/checkpoints/<session>/``:
``blobs/<sha256>`` holds each saved content once; ``index.jsonl`` holds the metadata records
(added, sealed with the state the tool left, dropped after an undo), one JSON object a line.
Without a directory everything is kept in memory and lost with the process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("tools.undo.checkpoints")

_DIR_MODE = 0o700
_FILE_MODE = 0o600
_CHUNK = 1024 * 1024
_MAX_INDEX_LINE = 64 * 1024
INDEX_NAME = "index.jsonl"


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) as 0700; refuse a symlink in its place."""
    path.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{path} is not a directory")
    if stat.S_IMODE(info.st_mode) != _DIR_MODE:
        os.chmod(path, _DIR_MODE)


class BlobWriter:
    """Receives one content in chunks; `commit` files it under its digest."""

    def __init__(self, store: BlobStore) -> None:
        self._store = store
        self._chunks: list[bytes] = []
        self._size = 0
        self._fd: int | None = None
        self._temp: Path | None = None
        if store.directory is not None:
            self._temp = store.directory / f".incoming-{os.getpid()}-{id(self)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
            self._fd = os.open(self._temp, flags, _FILE_MODE)

    def write(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._fd is None:
            self._chunks.append(chunk)
            return
        view = memoryview(chunk)
        while view:
            view = view[os.write(self._fd, view) :]

    def commit(self, digest: str) -> None:
        self._close()
        self._store.add(digest, self._temp, b"".join(self._chunks), self._size)

    def abort(self) -> None:
        self._close()
        if self._temp is not None:
            with contextlib.suppress(FileNotFoundError):
                self._temp.unlink()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class BlobStore:
    """Saved contents by sha256, each kept once."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._memory: dict[str, bytes] = {}
        self._sizes: dict[str, int] = {}
        self._unsynced: set[str] = set()
        self._stored = 0
        if directory is not None:
            make_private_dir(directory)
            for entry in os.scandir(directory):
                if entry.name.startswith(".incoming-"):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                elif _is_digest(entry.name) and entry.is_file(follow_symlinks=False):
                    self._sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
            self._stored = sum(self._sizes.values())

    @property
    def stored_bytes(self) -> int:
        """Bytes of saved content (kept as a total: a scan asks for every new file)."""
        return self._stored

    def __contains__(self, digest: str) -> bool:
        return digest in self._sizes

    def writer(self) -> BlobWriter:
        return BlobWriter(self)

    def put(self, data: bytes) -> str:
        """Save ``data``; returns its digest."""
        writer = self.writer()
        writer.write(data)
        digest = hashlib.sha256(data).hexdigest()
        writer.commit(digest)
        return digest

    def add(self, digest: str, temp: Path | None, data: bytes, size: int) -> None:
        if digest in self._sizes:
            if temp is not None:
                temp.unlink()
            return
        if temp is None:
            self._memory[digest] = data
        else:
            assert self.directory is not None
            os.replace(temp, self.directory / digest)
            self._unsynced.add(digest)
        self._sizes[digest] = size
        self._stored += size

    def sync(self, digests: set[str]) -> None:
        """Make the saved contents ``digests`` durable, before a checkpoint names them.

        Only the contents a checkpoint refers to are synced (a command's snapshot saves
        every file it has not seen, most of which nothing ever needs), then the directory
        once, so their names survive a power cut too.
        """
        pending = digests & self._unsynced
        if not pending or self.directory is None:
            return
        for digest in sorted(pending):
            _fsync_path(self.directory / digest)
            self._unsynced.discard(digest)
        _fsync_path(self.directory, directory=True)

    def read(self, digest: str) -> Iterator[bytes]:
        """The saved content in chunks.

        Raises:
            FileNotFoundError: no content with that digest was saved.
        """
        if self.directory is None:
            if digest not in self._memory:
                raise FileNotFoundError(f"no saved copy {digest[:12]}")
            yield self._memory[digest]
            return
        if not _is_digest(digest):
            raise FileNotFoundError(f"no saved copy {digest[:12]}")
        fd = os.open(self.directory / digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            while chunk := os.read(fd, _CHUNK):
                yield chunk
        finally:
            os.close(fd)

    def keep_only(self, wanted: set[str]) -> None:
        """Delete every saved content not in ``wanted``."""
        for digest in [d for d in list(self._sizes) if d not in wanted]:
            self._stored -= self._sizes.pop(digest)
            self._memory.pop(digest, None)
            if self.directory is not None:
                with contextlib.suppress(OSError):
                    (self.directory / digest).unlink()


def _fsync_path(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_DIRECTORY if directory else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_digest(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


class CheckpointIndex:
    """The append-only metadata log of one session's checkpoints."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / INDEX_NAME if directory is not None else None

    def load(self) -> list[dict[str, Any]]:
        """Every readable record, in order; damaged lines are skipped and logged."""
        if self.path is None:
            return []
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        with os.fdopen(fd, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                record = _parse(line)
                if record is None:
                    log.warning("checkpoint_index_line_skipped", path=str(self.path), line=number)
                else:
                    records.append(record)
        return records

    def append(self, *records: dict[str, Any]) -> None:
        """Write ``records`` and fsync, so they survive a crash."""
        if self.path is None or not records:
            return
        payload = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.path, flags, _FILE_MODE)
        try:
            view = memoryview(payload.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)


def _parse(line: bytes) -> dict[str, Any] | None:
    if len(line) > _MAX_INDEX_LINE:
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def prune_checkpoints(
    root: Path,
    *,
    keep: str,
    session_exists: Callable[[str], bool],
    max_age: float,
    now: Callable[[], float] = time.time,
) -> list[str]:
    """Delete the checkpoints of deleted sessions and those untouched for ``max_age`` seconds.

    ``keep`` (the running session) is never deleted. Returns the session ids pruned.
    """
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    pruned: list[str] = []
    for entry in entries:
        if entry.name == keep or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            age = now() - _last_change(Path(entry.path))
        except OSError:
            continue
        if session_exists(entry.name) and age <= max_age:
            continue
        # rmtree works on descriptors and does not follow symlinks inside the tree.
        shutil.rmtree(entry.path, ignore_errors=True)
        pruned.append(entry.name)
    if pruned:
        log.info("checkpoints_pruned", sessions=pruned)
    return pruned


def _last_change(directory: Path) -> float:
    index = directory / INDEX_NAME
    try:
        return os.lstat(index).st_mtime
    except FileNotFoundError:
        return os.lstat(directory).st_mtime
