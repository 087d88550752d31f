"""The embedded fleet store: one small JSON file under ``AGENT_HOME``, changed under ``flock``.

Every request reads and changes this file two or three times, so it is kept cheap:
- the lock is an OS lock (``flock``) on a separate file, which the kernel releases when its
  holder dies, so a dead holder never blocks anyone; readers take it shared, writers
  exclusive, so nobody reads a file while it is being written;
- the file stays open from one update to the next while it is the file at its path (a
  deleted or renamed-over file is opened again);
- a change that leaves the records as they were writes nothing;
- the JSON is parsed only when the file's bytes differ from what this store last read or
  wrote there (kept with the records they encode). The bytes are compared, not the file's
  size and times: another agent rewrites the file in place (same inode), often to the same
  length, and within one tick of the file-system clock, so a stat would not see its write;
- a write replaces the file's bytes in place with one ``pwrite`` (padded with spaces to the
  old length, then truncated), not a temporary file renamed over it: a rename costs ext4 a
  flush of the new blocks each time, and a process killed at any point leaves either the old
  state or the new one, each valid JSON;
- the state is not fsynced: it describes the next minutes, and a file damaged by a power cut
  reads as empty, which only costs the fleet what it had learned.
A holder that is alive but stuck (stopped, swapping) is waited for at most ``lock_timeout``
seconds; then the operation fails with `StoreUnavailable` and the agent goes on alone.

The file is untrusted: anything there but a regular file of at most `MAX_STATE_BYTES` of JSON
objects (a link, a FIFO, garbage) reads as empty and is replaced by the next write.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from recovery.fleet.store import Record, StoreUnavailable

__all__ = ["FileStore"]

T = TypeVar("T")

STALE_AFTER = 86_400.0
"""Seconds after which a record nobody updated is dropped, so the file stays small."""
REFRESH_AFTER = 3_600.0
"""A record in use but unchanged for this long is written again, so it is never dropped."""
MAX_STATE_BYTES = 4 << 20
"""A state file larger than this is not the agents' (a few hundred bytes per key): ignored."""

MAX_PAD_BYTES = 64 << 10
"""Up to this many bytes of a shrinking state are overwritten with spaces before the cut."""

_POLL = 0.002
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FileStore:
    """Fleet records in ``directory/fleet.json``, locked through ``directory/fleet.lock``.

    Args:
        directory: Created 0700 if missing (files are 0600).
        lock_timeout: Most seconds to wait for the lock.
        clock: Wall-clock seconds, to drop stale records.
    """

    name = "file"

    def __init__(
        self,
        directory: Path,
        *,
        lock_timeout: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self.path = directory / "fleet.json"
        self.lock_path = directory / "fleet.lock"
        self._lock_timeout = lock_timeout
        self._clock = clock
        self._lock_fd: int | None = None
        self._state_fd: int | None = None
        """``fleet.json`` as opened by an earlier update, kept while it is the file there."""
        self._known: tuple[bytes, dict[str, Record]] | None = None
        """The file's bytes when this store last read or wrote it, and their records."""

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        # try/finally rather than context managers: this runs on every request.
        lock = self._lock(fcntl.LOCK_EX)
        try:
            fd, info = self._state()
            raw, size = _read(fd, info)
            # Records this store kept with the same bytes are reused, and changed in
            # place: they are forgotten until the file is known to hold them again.
            known, self._known = self._known, None
            records = self._records(raw, known[1] if known and known[0] == raw else None)
            record = records.setdefault(key, {})
            result = change(record)
            data = _encode(records)
            now = self._clock()
            if data != raw or now - _number(record.get("updated")) > REFRESH_AFTER:
                record["updated"] = now
                data = _encode(records)
                self._write(fd, data, size)
            self._known = (data, records)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        return result

    def clock(self) -> float:
        return self._clock()  # one machine: one clock

    def snapshot(self) -> dict[str, Record]:
        with self._locked(fcntl.LOCK_SH):
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                return {}
            try:
                return self._records(_read(fd, os.fstat(fd))[0])
            except OSError:
                return {}
            finally:
                os.close(fd)

    @contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        fd = self._lock(mode)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock(self, mode: int) -> int:
        """Take the lock file's lock in ``mode``; the caller unlocks the fd this returns."""
        fd = self._open_lock()
        deadline = time.monotonic() + self._lock_timeout
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"{self.lock_path} stayed locked for {self._lock_timeout:g}s"
                    ) from None
                time.sleep(_POLL)
        return fd

    def _open_lock(self) -> int:
        if self._lock_fd is None:
            try:
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                self._lock_fd = os.open(self.lock_path, _OPEN_FLAGS, 0o600)
            except OSError as error:
                raise StoreUnavailable(f"cannot open {self.lock_path}: {error}") from None
        return self._lock_fd

    def _state(self) -> tuple[int, os.stat_result]:
        """The state file open for reading and writing, and its status (called under the
        exclusive lock). The descriptor an earlier update opened is used while it is still
        the file at the path (not deleted, nor replaced by a rename): an update then opens
        and closes nothing."""
        if self._state_fd is not None:
            try:
                info = os.fstat(self._state_fd)
                if info.st_nlink > 0:
                    return self._state_fd, info
            except OSError:
                pass
            with contextlib.suppress(OSError):
                os.close(self._state_fd)
            self._state_fd = None
        fd = self._open_state()
        try:
            info = os.fstat(fd)
        except OSError as error:
            os.close(fd)
            raise StoreUnavailable(f"cannot read {self.path}: {error}") from None
        self._state_fd = fd
        return fd, info

    def _open_state(self) -> int:
        """The state file open for reading and writing (called under the exclusive lock).

        Something else at its path (a link, a FIFO, a directory's worth of junk is not ours
        to follow) is removed and an empty regular file created in its place.
        """
        try:
            return self._open_regular()
        except OSError as error:
            raise StoreUnavailable(f"cannot open {self.path}: {error}") from None

    def _open_regular(self) -> int:
        try:
            fd = os.open(self.path, _OPEN_FLAGS, 0o600)
        except OSError:  # a symbolic link (ELOOP), say
            fd = None
        if fd is not None:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        return os.open(self.path, _OPEN_FLAGS | os.O_EXCL, 0o600)

    def _records(self, raw: bytes, parsed: dict[str, Record] | None = None) -> dict[str, Record]:
        """The records in ``raw`` (``parsed``: already parsed from it), without stale ones;
        anything but a JSON object of objects reads as none."""
        if parsed is None:
            try:
                loaded = json.loads(raw) if raw.strip() else {}
            except (ValueError, RecursionError):
                return {}
            if not isinstance(loaded, dict):
                return {}
            parsed = loaded
        now = self._clock()
        return {
            key: record
            for key, record in parsed.items()
            if isinstance(record, dict) and now - _number(record.get("updated")) < STALE_AFTER
        }

    def _write(self, fd: int, data: bytes, old_size: int) -> None:
        # One pwrite of the whole state, padded over the old bytes: whenever this process
        # stops, the file holds the old JSON or the new one (trailing spaces are valid JSON).
        # A file far larger than ours was not written by an agent: it is simply cut.
        pad = old_size - len(data)
        padded = data + b" " * pad if 0 < pad <= MAX_PAD_BYTES else data
        try:
            written = os.pwrite(fd, padded, 0)
            if written != len(padded):
                raise OSError(f"short write ({written} of {len(padded)} bytes)")
            if old_size > len(data):
                os.ftruncate(fd, len(data))
        except OSError as error:
            raise StoreUnavailable(f"cannot write {self.path}: {error}") from None


def _read(fd: int, info: os.stat_result) -> tuple[bytes, int]:
    """The bytes of the file ``fd`` with status ``info`` (none when it is not a regular file
    of a sane size) and its size."""
    try:
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STATE_BYTES:
            return b"", info.st_size
        # Sized by the file (room for it to have grown), not by the limit: a 4 MiB buffer
        # allocated on every read cost more than the rest of the update.
        data = os.pread(fd, info.st_size + 4096, 0)
    except OSError:
        return b"", 0
    if len(data) > MAX_STATE_BYTES:
        return b"", len(data)
    return data, len(data)


def _encode(records: dict[str, Record]) -> bytes:
    return json.dumps(records, separators=(",", ":")).encode()


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
