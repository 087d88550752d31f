"""The status line under a running turn: spinner, what is happening, model, tokens, countdown."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from rich.console import Console, ConsoleOptions, RenderResult
from rich.spinner import Spinner
from rich.text import Text

from providers import Usage
from recovery import DetourView, RequestHeld, RetryScheduled

WRITING = "writing"
STILL_WHILE_WRITING = 1.0
"""Seconds the spinner stands still after answer text arrived: the text shows that the
turn goes on, and a spinner turning beside it cost more bytes than a slow answer's text."""


@dataclass
class StatusSource:
    """Where the status line reads the model and the tokens used so far."""

    model: Callable[[], str]
    usage: Callable[[], Usage]
    background: Callable[[], int] = lambda: 0
    """How many background commands run."""


def compact_number(value: int) -> str:
    """``950``, ``12.3k``, ``1.2M``."""
    if value < 1000:
        return str(value)
    if value < 1_000_000:
        return f"{value / 1000:.1f}k"
    return f"{value / 1_000_000:.1f}M"


def detour_text(view: DetourView, now: datetime) -> str:
    """``on fallback b since 12:03 (a: 3 overloads in a row), next try of a at 12:08``.

    ``now`` is the wall-clock time the view was taken at (it holds seconds, not times).
    """
    since = (now - timedelta(seconds=view.since_ago)).strftime("%H:%M")
    line = f"on fallback {view.fallback} since {since} ({view.primary}: {view.reason})"
    if view.stays_because is not None:
        return f"{line}, for the rest of the session: {view.stays_because}"
    if view.next_trial_in is None:
        return line
    at = (now + timedelta(seconds=view.next_trial_in)).strftime("%H:%M")
    return f"{line}, next try of {view.primary} at {at}"


def duration_text(seconds: float) -> str:
    """``45s``, ``12m``, ``1h05m``."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"


def countdown_text(event: RetryScheduled | RequestHeld, now: float) -> str:
    """``retrying in 3s (attempt 2/8)`` or ``sending in 3s``; ``... now`` once the wait is
    over."""
    remaining = min(event.retry_at - now, 86_400.0)
    when = f"in {math.ceil(remaining)}s" if remaining > 0 else "now"
    if isinstance(event, RequestHeld):
        return f"sending {when}"
    return f"retrying {when} (attempt {event.attempt}/{event.max_attempts})"


class StatusLine:
    """A live renderable: each refresh recomputes the countdown and the elapsed time.

    Args:
        source: Model and usage; None shows neither.
        clock: The clock `RetryScheduled.retry_at` is measured on (monotonic).
    """

    def __init__(
        self, source: StatusSource | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.source = source
        self.clock = clock
        self.activity = "thinking"
        self.retry: RetryScheduled | RequestHeld | None = None
        self.started = clock()
        self._spinner = Spinner("dots", style="cyan")
        self._wrote = float("-inf")
        self._frame_time = 0.0
        self._since: float | None = None

    def start(self) -> None:
        """A new turn begins."""
        self.started = self.clock()
        self.activity = "thinking"
        self.retry = None
        self._since = None

    def running(self, tool: str) -> None:
        """A tool call passed its checks and runs: ``running run_command 12s``."""
        self.doing(f"running {tool}")
        self._since = self.clock()

    def tool_seconds(self) -> float | None:
        """How long the running tool has run; None when none runs."""
        return None if self._since is None else self.clock() - self._since

    def waiting(self, event: RetryScheduled | RequestHeld) -> None:
        """Show a countdown until ``event.retry_at``."""
        self.retry = event

    def doing(self, activity: str) -> None:
        """Show ``activity`` (and end any countdown)."""
        self.activity = activity
        self.retry = None
        self._since = None
        if activity == WRITING:
            self._wrote = self.clock()

    def text(self) -> Text:
        """The line without the spinner (also what tests read)."""
        now = self.clock()
        line = Text(no_wrap=True, overflow="ellipsis")
        if self.retry is not None:
            line.append(f"{_headline(self.retry)} — ", style="yellow")
            line.append(countdown_text(self.retry, now), style="bold yellow")
        else:
            line.append(self.activity)
            if self._since is not None:
                line.append(f" {duration_text(now - self._since)}")
        parts = [f"{now - self.started:.0f}s"]
        if self.source is not None:
            usage = self.source.usage()
            parts.insert(0, self.retry.model if self.retry else str(self.source.model()))
            total = usage.input_tokens + usage.output_tokens
            if total:
                parts.insert(1, f"{compact_number(total)} tokens")
            if running := self.source.background():
                parts.append(f"{running} background")
        line.append(" · " + " · ".join(parts), style="dim")
        line.append(" · Ctrl-C to interrupt", style="dim")
        return line

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.activity != WRITING or self.clock() - self._wrote > STILL_WHILE_WRITING:
            self._frame_time = console.get_time()
        frame = self._spinner.render(self._frame_time)
        line = Text.assemble(frame if isinstance(frame, Text) else "", " ", self.text())
        line.no_wrap = True
        line.overflow = "ellipsis"
        line.truncate(options.max_width, overflow="ellipsis")
        yield line


def _headline(event: RetryScheduled | RequestHeld) -> str:
    """What a countdown waits for, before the countdown itself."""
    if isinstance(event, RequestHeld) and event.server and event.other_agent:
        return f"{event.model}: the API asked another agent on this key to slow down"
    return event.describe().split(" — ")[0]
