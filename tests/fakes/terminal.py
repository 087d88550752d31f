"""Drive the real ``agent`` REPL in a pseudo-terminal (pexpect), pointed at the fake LLM server."""

from __future__ import annotations

import re
from collections.abc import Callable

import pexpect
import pyte

__all__ = ["PROMPT", "TERMINAL_ENV", "Screen", "Spawn", "Terminal", "clean"]

PROMPT = "\x1b[?2004h"  # prompt-toolkit turns bracketed paste on as each prompt starts
# A pty answers no cursor-position queries; without this prompt-toolkit waits and warns.
TERMINAL_ENV = {"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}


class Terminal:
    """A running REPL: send keys, wait for text."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child

    def expect(self, pattern: str, timeout: float = 20) -> str:
        self.child.expect(pattern, timeout=timeout)
        return str(self.child.before) + str(self.child.after)

    def prompt(self, timeout: float = 20) -> str:
        """Wait for a ready prompt; returns what was printed before it."""
        self.child.expect_exact(PROMPT, timeout=timeout)
        return str(self.child.before)

    def send_line(self, text: str) -> None:
        self.child.send(text + "\r")

    def command(self, line: str, timeout: float = 20) -> str:
        """Send ``line`` and wait for the next prompt; returns the cleaned output in between."""
        self.send_line(line)
        return clean(self.prompt(timeout))

    def interrupt(self) -> None:
        self.child.sendintr()

    def exit(self) -> str:
        """Ctrl-D at the prompt; returns what was printed until the process ended."""
        self.child.sendcontrol("d")
        self.child.expect(pexpect.EOF, timeout=20)
        self.child.wait()
        return str(self.child.before)


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
