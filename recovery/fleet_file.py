"""The embedded fleet store: one small JSON file under ``AGENT_HOME``, changed under ``flock``.

Safe against a process killed at any point:
- the lock is an OS lock (``flock``) on a separate file, which the kernel releases when its
  holder dies, so a dead holder never blocks anyone;
- the state is replaced whole by ``rename``, so readers see the old file or the new one,
  never half of one (a leftover temporary file is simply overwritten by the next writer);
- the state is not fsynced: it describes the next minutes, and a file lost or damaged by a
  power cut reads as empty, which only costs the fleet what it had learned.
A holder that is alive but stuck (stopped, swapping) is waited for at most ``lock_timeout``
seconds; then the operation fails with `StoreUnavailable` and the agent goes on alone.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from recovery.fleet_store import Record, StoreUnavailable

__all__ = ["FileStore"]

T = TypeVar("T")

STALE_AFTER = 86_400.0
MAX_STATE_BYTES = 4 << 20
"""A state file larger than this is not the agents' (a few hundred bytes per key): ignored."""
"""Seconds after which a record nobody updated is dropped, so the file stays small."""

_POLL = 0.002


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

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        with self._locked():
            records = self._read()
            result = change(records.setdefault(key, {}))
            records[key]["updated"] = self._clock()
            self._write(records)
        return result

    def snapshot(self) -> dict[str, Record]:
        return self._read()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = self._open_lock()
        deadline = time.monotonic() + self._lock_timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreUnavailable(
                        f"{self.lock_path} stayed locked for {self._lock_timeout:g}s"
                    ) from None
                time.sleep(_POLL)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _open_lock(self) -> int:
        if self._lock_fd is None:
            try:
                self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                self._lock_fd = os.open(self.lock_path, flags, 0o600)
            except OSError as error:
                raise StoreUnavailable(f"cannot open {self.lock_path}: {error}") from None
        return self._lock_fd

    def _read(self) -> dict[str, Record]:
        """The records on disk; anything else there (a link, a FIFO, garbage) reads as none."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return {}
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STATE_BYTES:
                return {}
            data = json.loads(os.read(fd, MAX_STATE_BYTES + 1))
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            os.close(fd)
        if not isinstance(data, dict):
            return {}
        now = self._clock()
        return {
            key: record
            for key, record in data.items()
            if isinstance(record, dict) and now - _number(record.get("updated")) < STALE_AFTER
        }

    def _write(self, records: dict[str, Record]) -> None:
        # Only the lock holder writes, so one fixed temporary name is enough.
        temporary = self.path.with_name(self.path.name + ".tmp")
        data = json.dumps(records, separators=(",", ":")).encode()
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            fd = os.open(temporary, flags, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as error:
            raise StoreUnavailable(f"cannot write {self.path}: {error}") from None


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
