"""Drive the real ``agent`` REPL in a pseudo-terminal (pexpect), pointed at the fake LLM server."""

from __future__ import annotations

import re
from collections.abc import Callable

import pexpect

__all__ = ["PROMPT", "TERMINAL_ENV", "Spawn", "Terminal", "clean"]

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


Spawn = Callable[..., Terminal]
"""The ``spawn`` fixture: ``spawn(*agent_args)`` starts the REPL in a pseudo-terminal."""


def clean(text: str) -> str:
    """Terminal output without escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\r", "", text)
