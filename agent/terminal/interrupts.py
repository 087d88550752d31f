"""Ctrl-C between the prompts: it stops the work under way, never the REPL.

While the prompt is up, Ctrl-C is a key the prompt handles. Once a line is entered the
terminal sends SIGINT again, and Python's default handler would raise KeyboardInterrupt
wherever the REPL happened to be, ending it — a turn that had not quite started (or a
picker that had just closed) took the session down with it. `Interrupts` holds SIGINT from
the moment the prompt returns: it cancels the work `run` is awaiting, or, when none is under
way yet, the next work to start, which then ends as interrupted.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Interrupts:
    """SIGINT, taken over for the REPL between prompts."""

    def __init__(self) -> None:
        self._work: asyncio.Task[Any] | None = None
        self._pending = False

    def arm(self) -> None:
        """Take SIGINT (again): call when a prompt returns, since the prompt gives it back to
        Python's default. Forgets an interrupt from before: the person has typed since."""
        self._pending = False
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._interrupt)

    def _interrupt(self) -> None:
        if self._work is not None and not self._work.done():
            self._work.cancel()
        else:
            self._pending = True

    async def run(self, work: Coroutine[Any, Any, T]) -> T | None:
        """Await ``work`` so that Ctrl-C cancels it; None if it was cancelled that way.

        Raises:
            asyncio.CancelledError: The REPL itself is being cancelled (SIGTERM, SIGHUP).
        """
        self.arm_if_needed()
        task = asyncio.create_task(work)
        self._work = task
        if self._pending:  # Ctrl-C came between Enter and now: this is what it stops
            self._pending = False
            task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise
            return None
        finally:
            self._work = None

    def arm_if_needed(self) -> None:
        """Take SIGINT if something (a picker's prompt) gave it back, keeping what is pending."""
        pending = self._pending
        self.arm()
        self._pending = pending
