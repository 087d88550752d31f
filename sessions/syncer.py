"""`PacedSync`: a file's fsyncs on a thread of its own, at most one per interval.

An fsync is what makes written records survive a power cut (a ``kill -9`` only needs the
write). On the machines we measured, one costs 0.1–0.5 ms of CPU and sleeps several times in
the kernel, and handing it to a thread costs a few context switches more: with a model that
answers at once, the fsync of each step was most of what the agent added to it. Steps that
follow each other faster than the interval share one fsync, started an interval after the
previous one; a step that comes later is synced at once, as before. A power cut can then
take at most the last interval's records; nothing acknowledged is lost to a crash of the
agent, and `close` syncs what is left before it returns.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable

__all__ = ["SYNC_INTERVAL", "PacedSync"]

SYNC_INTERVAL = 0.2
"""Seconds between the starts of two fsyncs of one session file (0: none shared)."""


class PacedSync:
    """fsyncs ``fd`` in the background when asked, at most once per ``interval`` seconds.

    Args:
        fd: The file (it must stay open until `close` returns).
        interval: Least time between the starts of two fsyncs.
        clock: Monotonic seconds.
    """

    def __init__(
        self, fd: int, interval: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._fd = fd
        self._interval = interval
        self._clock = clock
        self._cond = threading.Condition()
        self._dirty = False
        """Written since the last fsync started."""
        self._start = False
        """`request` decided the next fsync starts now (and counted it)."""
        self._running = False
        self._idle = False
        """The thread waits for a request (not for a deadline)."""
        self._last = -math.inf
        self._error: OSError | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.issued = 0
        """fsyncs started so far."""

    def request(self) -> None:
        """What was written so far is to be fsynced: now, or an interval after the last one.

        Raises:
            OSError: the previous fsync failed (each failure is raised once). What this
                request asked for is still synced: by the next fsync, or by `close`.
        """
        with self._cond:
            failure, self._error = self._error, None
            now = self._clock()
            if not self._running and not self._start and now - self._last >= self._interval:
                self._begin(now)
                self._start = True
            else:
                self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="session-fsync", daemon=True)
                self._thread.start()
            elif self._idle:  # a thread waiting for a deadline wakes up by itself
                self._cond.notify()
        if failure is not None:
            raise failure

    @property
    def busy(self) -> bool:
        """An fsync is under way or about to start."""
        with self._cond:
            return self._running or self._start

    def close(self) -> None:
        """Stop the thread once its fsync is done, then sync what is still unsynced.

        Raises:
            OSError: an fsync failed.
        """
        with self._cond:
            self._stopped = True
            self._cond.notify()
            while self._running or self._start:
                self._cond.wait()
            pending = self._dirty
            self._dirty = False
            if pending:
                self._begin(self._clock())
        if pending:
            os.fsync(self._fd)
        with self._cond:
            self._raise_failure()

    def _begin(self, now: float) -> None:
        self._dirty = False
        self._last = now
        self.issued += 1

    def _raise_failure(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._start:
                    self._start = False
                elif self._stopped:
                    return
                elif not self._dirty:
                    self._idle = True
                    self._cond.wait()
                    self._idle = False
                    continue
                else:
                    delay = self._last + self._interval - self._clock()
                    if delay > 0:
                        self._cond.wait(delay)
                        continue
                    self._begin(self._clock())
                self._running = True
                error: OSError | None = None
                self._cond.release()
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    error = exc
                finally:
                    self._cond.acquire()
                self._running = False
                self._error = error or self._error
                self._cond.notify_all()
