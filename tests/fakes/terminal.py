"""Drive the real ``agent`` REPL in a pseudo-terminal (pexpect), pointed at the fake LLM server."""

from __future__ import annotations

import copy
import itertools
import re
import time
from collections.abc import Callable
from typing import Any

import pexpect
import pyte

from tests.fakes.reflowing_screen import ReflowingScreen

__all__ = ["PROMPT", "TERMINAL_ENV", "Screen", "Spawn", "Terminal", "clean"]

PROMPT = "\x1b[?2004h"  # prompt-toolkit turns bracketed paste on as each prompt starts
# A pty answers no cursor-position queries; without this prompt-toolkit waits and warns.
TERMINAL_ENV = {"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}


class Terminal:
    """A running REPL: send keys, wait for text, read what the screen shows.

    What the child writes is played on an emulated terminal of the pty's size as it is read.
    ``expect``, ``prompt`` and ``exit`` return the rows that output drew on since the last
    of them returned: the text a person saw, with the escape sequences carried out. That is
    what tests should assert on; the live view writes only the cells that change, so one
    line's words may reach the terminal in separate writes, with cursor moves between them.
    ``raw`` keeps the bytes as written, for what must never be sent at all.
    """

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        rows, columns = child.getwinsize()
        self._screen = _Screen(columns, rows, history=100_000)
        self._stream = pyte.Stream(self._screen)
        self._mark = 0
        self.raw = ""
        """Everything the child wrote so far, escape sequences included."""

    def expect(self, pattern: str, timeout: float = 20) -> str:
        """Wait for ``pattern`` in what the child writes, or on the screen it draws."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.child.expect(pattern, timeout=min(0.25, timeout))
            except pexpect.TIMEOUT:
                if self._consume_until_shown(pattern):
                    return self._shown()
                if time.monotonic() >= deadline:
                    raise
                continue
            self._consume(str(self.child.before) + str(self.child.after))
            return self._shown()

    def prompt(self, timeout: float = 20) -> str:
        """Wait for a ready prompt; returns what was shown before it."""
        self.child.expect_exact(PROMPT, timeout=timeout)
        self._consume(str(self.child.before) + str(self.child.after))
        return self._shown()

    def send_line(self, text: str) -> None:
        self.child.send(text + "\r")

    def command(self, line: str, timeout: float = 20) -> str:
        """Send ``line`` and wait for the next prompt; returns what was shown in between."""
        self.send_line(line)
        return self.prompt(timeout)

    def resize(
        self, rows: int, columns: int, *, reflow: bool = True, anchor_bottom: bool = False
    ) -> None:
        """Resize the terminal as a person does: what the child wrote so far is drawn, the
        emulated screen takes the new size (rewrapping its lines, as most terminals do, or
        cutting them, as xterm does: ``reflow=False``; ``anchor_bottom``: as tmux does, see
        `ReflowingScreen.resize`), then the child gets SIGWINCH."""
        pending = str(self.child.buffer)
        while True:
            try:
                pending += str(self.child.read_nonblocking(65536, timeout=0))
            except (pexpect.TIMEOUT, pexpect.EOF):
                break
        self._keep_unread("")
        self._consume(pending)
        self._screen.resize(rows, columns, reflow=reflow, anchor_bottom=anchor_bottom)
        self.child.setwinsize(rows, columns)

    def interrupt(self) -> None:
        self.child.sendintr()

    def ended(self, timeout: float = 20) -> str:
        """Wait for the process to end; returns what was shown until then."""
        self.child.expect(pexpect.EOF, timeout=timeout)
        self._consume(str(self.child.before))
        self.child.wait()
        return self._shown()

    def exit(self) -> str:
        """Ctrl-D at the prompt; returns what was shown until the process ended."""
        self.child.sendcontrol("d")
        return self.ended()

    def exit_for_resume(self) -> str:
        """Ctrl-D at the prompt; the session id that the resume hint shown on leaving names."""
        said = re.search(r"agent --resume (\w+)", clean(self.exit()))
        assert said is not None, "no resume hint on leaving"
        return said.group(1)

    def lines(self) -> list[str]:
        """Every row of the emulated terminal as it stands: those scrolled off the top,
        then those on the screen, right-trimmed (read after `expect`, `prompt` or `ended`)."""
        columns, above = self._screen.columns, self._screen.history.top
        rows = ["".join(line[x].data for x in range(columns)).rstrip() for line in above]
        return rows + [line.rstrip() for line in self._screen.display]

    def logical_lines(self) -> list[str]:
        """`lines` with each row a line wrapped onto joined to that line again: a terminal
        that rewraps at a resize splits a line at its new width, in the middle of a word."""
        screen = self._screen
        rows = [*screen.history.top, *(screen.buffer[y] for y in range(screen.lines))]
        joined: list[str] = []
        for row in rows:
            text = "".join(row[x].data for x in range(screen.columns))
            if joined and getattr(row, "continued", False):
                joined[-1] += text
            else:
                joined.append(text)
        return [line.rstrip() for line in joined]

    def _consume(self, written: str) -> None:
        self.raw += written
        self._stream.feed(written)

    def _consume_until_shown(self, pattern: str) -> bool:
        """Play the unread output up to where ``pattern`` shows on screen, if it does.

        Tried on a copy first, so nothing is consumed when it does not show: the rest stays
        in pexpect's buffer for the next ``expect``.
        """
        pending = str(self.child.buffer)
        if not pending:
            return False
        trial = copy.deepcopy(self._screen)
        stream = pyte.Stream(trial)
        for piece in re.finditer(r"\x1b[^\x1b]*|[^\x1b]+", pending, re.DOTALL):
            stream.feed(piece.group())
            if re.search(pattern, self._rows_since_mark(trial)):
                self._keep_unread(pending[piece.end() :])
                self._consume(pending[: piece.end()])
                return True
        return False

    def _keep_unread(self, rest: str) -> None:
        """Leave only ``rest`` unread in pexpect's buffers. Its ``before`` is cut from a
        second copy of what came since the last match, which setting ``buffer`` leaves as it
        is: text consumed here would be played again with the next match."""
        self.child.buffer = rest
        self.child._before = self.child.buffer_type()
        self.child._before.write(rest)

    def _shown(self) -> str:
        shown = self._rows_since_mark(self._screen)
        self._mark = len(self._screen.history.top) + self._screen.cursor.y
        self._screen.cleared_at = None
        return shown

    def _rows_since_mark(self, screen: _Screen) -> str:
        mark = self._mark if screen.cleared_at is None else min(self._mark, screen.cleared_at)
        columns = screen.columns
        above = screen.history.top
        rows = [
            "".join(line[x].data for x in range(columns)).rstrip()
            for line in itertools.islice(above, min(mark, len(above)), None)
        ]
        first_on_screen = max(0, mark - len(above))
        rows += [line.rstrip() for line in screen.display[first_on_screen:]]
        while rows and not rows[-1]:
            rows.pop()
        return "\n".join(rows)


class _Screen(ReflowingScreen):
    """An emulated terminal that notes where its display was last cleared."""

    cleared_at: int | None = None
    """The first row of the cleared display, counting the rows scrolled off above it."""

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        super().erase_in_display(how, *args, **kwargs)
        if how in (2, 3):  # the whole display: what follows starts from its top row
            self.cleared_at = len(self.history.top)


class Screen:
    """What the terminal shows: everything the child writes, played on an emulated terminal.

    Attach it before the child writes (``Screen(terminal)``); ``answer_cursor_queries`` makes
    it answer prompt-toolkit's cursor-position request as a real terminal does.
    """

    def __init__(
        self,
        terminal: Terminal,
        rows: int = 40,
        columns: int = 100,
        answer_cursor_queries: bool = False,
    ) -> None:
        self.written = 0
        """Bytes the child wrote to the terminal so far."""
        self._screen = pyte.HistoryScreen(columns, rows, history=10_000)
        if answer_cursor_queries:
            self._screen.write_process_input = terminal.child.send  # type: ignore[method-assign]
        self._stream = pyte.Stream(self._screen)
        terminal.child.logfile_read = self

    def write(self, data: str) -> None:
        self.written += len(data.encode())
        self._stream.feed(data)

    def flush(self) -> None:
        """(pexpect flushes its log.)"""

    @property
    def display(self) -> list[str]:
        """The rows on the screen now, right-trimmed."""
        return [line.rstrip() for line in self._screen.display]

    @property
    def lines(self) -> list[str]:
        """The rows scrolled off the top, then those on the screen, right-trimmed."""
        history = self._screen.history.top
        columns = self._screen.columns
        above = ["".join(line[x].data for x in range(columns)).rstrip() for line in history]
        return above + self.display

    @property
    def cursor_row(self) -> int:
        return int(self._screen.cursor.y)


Spawn = Callable[..., Terminal]
"""The ``spawn`` fixture: ``spawn(*agent_args)`` starts the REPL in a pseudo-terminal."""


def clean(text: str) -> str:
    """Terminal output without escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\r", "", text)
