"""Rendering of a turn to a terminal (rich): streamed markdown, tool calls, diffs, banners.

On a terminal the answer streams as markdown: each finished row is printed once, and only
the row being written stays live, above a status line (spinner, model, tokens, retry
countdown) in a small area redrawn by writing only what changed (`LiveArea`). When the output
is not a terminal, or answer and activity go to different streams (``-p``), everything is
plain text and the answer is printed verbatim.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console, RenderableType
from rich.segment import Segments
from rich.text import Text

from agent.engine.outcome import SubagentRecovery, SubagentStarted, TurnEnded, TurnStatus
from agent.terminal.answer_view import AnswerView, Row
from agent.terminal.banners import banner, is_quiet
from agent.terminal.children_view import ChildrenPanel
from agent.terminal.console import visible
from agent.terminal.live_area import LiveArea
from agent.terminal.renderables import (
    diff_view,
    excerpt,
    plain_tool_line,
    read_excerpt,
    tool_line,
    unified_diff,
)
from agent.terminal.status_line import WRITING, StatusLine, StatusSource, duration_text
from agent.terminal.stream import RedactingStream
from agent.terminal.todo_view import TodoPanel
from compaction.events import CompactionStarted
from providers import (
    ErrorKind,
    Event,
    Message,
    StreamDelta,
    StreamReset,
    TextDelta,
    ToolResultBlock,
    ToolUseBlock,
)
from providers.provider import ToolUseDelta
from recovery import RequestHeld, RetryScheduled
from tools import CheckpointRecorded, ToolStarted
from tools.text import redact_value

MAX_STASHED_BYTES = 512_000


class ConsoleUI:
    """Shows a turn as it happens: answer text on ``out``, activity on ``err``.

    Args:
        out: Where the answer goes.
        err: Where activity goes (tool lines, banners); defaults to ``out``.
        stream: Print the answer as it streams (off for ``--output-format json``).
        workspace: Lets edits be shown as diffs against the file before the change.
        clock: The clock of `RetryScheduled.retry_at`, for the countdown.
        live: Force the live (terminal) mode on or off; by default it is on when ``out`` is
            an interactive terminal and is also where activity goes.
        redact: Hides secrets in tool calls, results and diffs before they are shown
            (and before they are cut to fit a line).
        verbose: Print every retry and recovery event, not just what the person needs.
    """

    def __init__(
        self,
        out: Console,
        err: Console | None = None,
        *,
        stream: bool = True,
        workspace: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        live: bool | None = None,
        redact: Callable[[str], str] = lambda text: text,
        verbose: bool = False,
    ) -> None:
        self.redact = redact
        self.verbose = verbose
        self.out = out
        self.err = err or out
        self.stream = stream
        self.workspace = workspace
        terminal = out.is_terminal and not out.is_dumb_terminal
        self.live_mode = live if live is not None else (err is None or err is out) and terminal
        self.status = StatusLine(clock=clock)
        self.todos = TodoPanel(redact)
        """The model's plan, shown above the status line."""
        self.children = ChildrenPanel(clock, redact)
        """A line per sub-agent at work, above the plan (its start gets no line of its own)."""
        self._answer = AnswerView(out, redact)
        self._writing = False
        self._plain = RedactingStream()
        self._lock = threading.RLock()
        self._live: LiveArea | None = None
        self._open_line = False
        self._before: dict[str, tuple[str, str | None]] = {}
        self._last_retry: RetryScheduled | None = None
        self._calls: dict[str, ToolUseBlock] = {}
        self._running: ToolUseBlock | None = None
        self._pipe_width = None if self.err.is_terminal else self.err.width
        """Activity's width when it goes to a pipe or file, asked once: rich works it out
        anew on every call (environment, terminal size), a fifth of a tool line's cost."""

    def bind(self, source: StatusSource) -> None:
        """Read the model and token counts for the status line from ``source``."""
        self.status.source = source

    def begin_turn(self) -> None:
        """A turn starts: show the status line (terminal mode)."""
        self.status.start()
        self._calls.clear()
        self._running = None
        self._start_live()

    def on_delta(self, delta: StreamDelta) -> None:
        """Stream answer text; note a restarted stream."""
        if isinstance(delta, TextDelta):
            self.status.doing(WRITING)
            if self.stream:
                self._text(delta.text)
        elif isinstance(delta, ToolUseDelta):
            if delta.name:
                if self.stream:  # the text before a tool call is over: its last line too
                    self._commit()
                self.status.doing(f"preparing {delta.name}")
        elif isinstance(delta, StreamReset):
            self._discard_partial(delta.reason)

    def on_message(self, message: Message) -> None:
        """Nothing to show: the answer was streamed and each tool call has its line. Its
        calls are kept, to show the one running if the turn is interrupted."""
        self._calls.update((call.id, call) for call in message.tool_uses)

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """One compact line per tool call with its outcome, then a diff or an excerpt."""
        shown_input = redact_value(call.input, self.redact)
        if shown_input != call.input:
            call = call.model_copy(update={"input": shown_input})
        shown = self.redact(result.content)
        if shown != result.content:
            result = result.model_copy(update={"content": shown})
        self._running = None
        self._commit()
        if self._pipe_width is None:
            # Cut to the width already: printed without rich's wrapping pass, a third cheaper.
            self._print_activity(tool_line(call, result, self.err.width), fitted=True)
        else:
            self._print_line(plain_tool_line(call, result, self._pipe_width))
        detail = self._detail(call, result)
        if detail is not None:
            self._print_activity(detail)
        self.status.doing("thinking")

    def on_event(self, event: Event) -> None:
        """A one-line banner for recovery, compaction and continuation; a countdown for retries."""
        self.todos.on_event(event)
        self.children.on_event(event)
        if isinstance(event, SubagentStarted) and self.live_mode:
            return
        if isinstance(event, CheckpointRecorded):
            self._stash(event)
        if isinstance(event, ToolStarted):
            self._running = self._calls.get(event.tool_use_id)
            self.status.running(event.tool)
        elif isinstance(event, TurnEnded) and event.status is TurnStatus.INTERRUPTED:
            self._show_interrupted()
        if isinstance(event, RetryScheduled | RequestHeld):  # a child's: on its own line
            self.status.waiting(event)
        wait = event.recovery if isinstance(event, SubagentRecovery) else event
        if isinstance(wait, RetryScheduled) and not self._announce(wait):
            return
        if isinstance(wait, RequestHeld) and self.live_mode and not self.verbose:
            return  # a terminal counts it down; elsewhere it gets a line
        if isinstance(event, CompactionStarted):
            self.status.doing("compacting the conversation")
        if is_quiet(event, verbose=self.verbose):
            return
        self._commit()
        self._print_activity(banner(event, self.redact))

    def _show_interrupted(self) -> None:
        """The ✗ line of the tool call that was running when the turn was interrupted."""
        call, seconds = self._running, self.status.tool_seconds()
        if call is None:
            return
        after = f" after {duration_text(seconds)}" if seconds is not None else ""
        self.on_tool_result(
            call, ToolResultBlock(tool_use_id=call.id, content=f"interrupted{after}", is_error=True)
        )

    def _announce(self, retry: RetryScheduled) -> bool:
        """Whether ``retry`` gets a line of its own.

        Against a dead server a call retries every few seconds: a line each was 45 lines in
        75 s. On a terminal the status line counts each retry down instead; elsewhere (-p)
        only the first retry of a run (same model, same kind of failure) is printed. Tries
        of an unreachable endpoint get none: its own line said so (`EndpointUnreachable`).
        """
        last, self._last_retry = self._last_retry, retry
        if self.verbose:
            return True
        if self.live_mode or retry.kind is ErrorKind.UNREACHABLE:
            return False
        return (
            last is None
            or (last.model, last.kind) != (retry.model, retry.kind)
            or retry.attempt <= last.attempt
        )

    def finish(self) -> None:
        """End the answer: print what is left of it and remove the status line."""
        self._commit(final=True)
        self._stop_live()
        self._before.clear()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hide the status line while something else owns the terminal (a prompt)."""
        running = self._live is not None
        self._commit()
        self._stop_live()
        try:
            yield
        finally:
            if running:
                self._start_live()

    def show(self, renderable: RenderableType) -> None:
        """Print something between turns (a command's output) on the activity console."""
        self._print_activity(renderable)

    # -- answer text ---------------------------------------------------------------------

    def _text(self, text: str) -> None:
        if not self.live_mode:
            self._print_plain(self._plain.feed(text, self.redact))
            return
        with self._lock:  # shown by the live area's next refresh
            self._answer.feed(text)
            self._writing = True

    def _commit(self, final: bool = False) -> None:
        """Print the unfinished tail for good (before a tool line, a banner, the end)."""
        if not self.live_mode:
            self._end_plain()
            return
        with self._lock:
            rows = self._answer.end()
            self._writing = False
            if self._live is not None:
                self._live.update(rows, self._area([]))
            else:
                self._print_rows(rows)

    def _print_rows(self, rows: list[Row]) -> None:
        for row in rows:
            self.out.print(Segments(row), crop=False)

    def _print_plain(self, text: str) -> None:
        if text:
            self.out.print(text, end="", markup=False, highlight=False, emoji=False, soft_wrap=True)
            self._open_line = not text.endswith("\n")

    def _end_plain(self) -> None:
        """Print what the plain stream held back, and end its line."""
        self._print_plain(self._plain.flush(self.redact))
        if self._open_line:
            self.out.print()
            self._open_line = False

    def _discard_partial(self, reason: str) -> None:
        with self._lock:
            printed = self._answer.reset()
            self._writing = False
        self._plain.reset()
        if self._open_line:
            self.out.print()
            self._open_line = False
        # Printed lines cannot be taken back: say that the answer starts over under them.
        shown = self.stream and (printed or not self.live_mode)
        note = " — the partial answer above is discarded" if shown else " — restarting the answer"
        self._print_activity(Text(f"↻ {reason}{note}", style="dim"))

    # -- activity -------------------------------------------------------------------------

    def _print_activity(self, renderable: RenderableType, *, fitted: bool = False) -> None:
        if not self.live_mode:
            self._end_plain()
        with self._lock:  # the live area is cleared for it and drawn again under it
            self.err.print(renderable, highlight=False, soft_wrap=fitted)

    def _print_line(self, line: str) -> None:
        """What rich would write to a pipe for a fitted line (no styles), without its render
        pipeline: a hundred times the cost of the write."""
        if not self.live_mode:
            self._end_plain()
        self.err.file.write(visible(line) + "\n")
        self.err.file.flush()

    def _detail(self, call: ToolUseBlock, result: ToolResultBlock) -> RenderableType | None:
        if not self.live_mode or result.is_error:
            return None
        path = str(call.input.get("path", ""))
        if call.name == "read_file":
            return read_excerpt(result, path)
        if call.name not in ("edit_file", "write_file"):
            return None
        stashed = self._before.pop(call.id, None)
        if stashed is not None and self.workspace is not None:
            relative, before = stashed
            after = _read(self.workspace / relative)
            if after is not None:
                after = self.redact(after)
            if before is None and after is not None:
                return excerpt(after, relative)
            if after is not None:
                return diff_view(unified_diff(self.redact(before or ""), after, relative))
        if call.name == "edit_file":
            old, new = str(call.input.get("old_string", "")), str(call.input.get("new_string", ""))
            return diff_view(unified_diff(old, new, path))
        return excerpt(str(call.input.get("content", "")), path)

    def _stash(self, event: CheckpointRecorded) -> None:
        """Keep a file's content from before a change, to show the change as a diff."""
        if self.workspace is None or not self.live_mode:
            return
        before = _read(self.workspace / event.path) if event.existed_before else None
        self._before[event.tool_use_id] = (event.path, before)

    # -- live area ------------------------------------------------------------------------

    def _start_live(self) -> None:
        if not self.live_mode or self._live is not None:
            return
        self._live = LiveArea(self.out, self._frame, self._lock)
        self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def refresh(self) -> None:
        """Draw the live area now (it is also drawn eight times a second)."""
        if self._live is not None:
            self._live.refresh()

    def _frame(self) -> tuple[list[Row], list[Row]]:
        """Rows of the answer finished since the last frame, and the live area's rows."""
        printed, live = self._answer.take()
        return printed, self._area(live)

    def _area(self, live: list[Row]) -> list[Row]:
        """The line being written (a blank one between its lines), a blank, the plan, the
        status line."""
        if self._writing and not live:
            live = [[]]
        options = self.out.options.update(height=1)
        status = [
            self.out.render_lines(line, options, pad=False)[0]
            for line in [*self.children.while_working(), *self.todos.while_working()]
        ]
        status += self.out.render_lines(self.status, options, pad=False)[:1]
        return [*live, [], *status] if live else status


def _read(path: Path) -> str | None:
    """A small regular file's text; None for anything else (a FIFO would block the UI)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_STASHED_BYTES:
                return None
            data = handle.read(MAX_STASHED_BYTES + 1)
        except OSError:
            return None
    return None if len(data) > MAX_STASHED_BYTES else data.decode("utf-8", errors="replace")


__all__ = ["ConsoleUI", "StatusSource"]
