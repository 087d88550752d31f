"""Streamed answer text: cut into lines that are finished, or let through redacted.

A terminal shows a streamed answer as markdown: each line is printed once, when its newline
arrives (a long line's complete rows sooner), and only the rest stays live (`MarkdownStream`
keeps the books, `agent.terminal.answer_view` renders them). Printed as plain text, a piece is
printed for good, so the end that could still become a secret is held back (`RedactingStream`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")

HOLD_LIMIT = 4_096
"""A run of this many characters without whitespace is let through, redacted as it stands."""
CONTEXT = 64
"""Characters of what went before that a pattern may look behind at (``Bearer `` + a token)."""


class RedactingStream:
    """Redacts text that arrives in pieces, as it arrives, for a stream nothing can take back.

    A key can arrive split over pieces (``sk-ant-`` now, the rest next). No key contains
    whitespace, so the last word is held back until whitespace (or the end) shows it is
    whole; what is let through is redacted together with the end of what went before, so
    a token whose ``Bearer `` was printed already is still recognised.
    """

    def __init__(self) -> None:
        self._held = ""
        self._before = ""

    def feed(self, text: str, redact: Callable[[str], str]) -> str:
        """What of the text so far can be printed now, redacted (possibly nothing)."""
        held = self._held = self._held + text
        if not held or held[-1].isspace():
            cut = len(held)
        else:  # where the last word starts (a regex would be quadratic in a long word)
            cut = len(held) - len(held.rsplit(None, 1)[-1])
        if cut == 0 and len(held) > HOLD_LIMIT:
            cut = len(held)
        out, self._held = self._held[:cut], self._held[cut:]
        return self._let_through(out, redact)

    def flush(self, redact: Callable[[str], str]) -> str:
        """Everything held back, redacted: the answer (or this part of it) is over."""
        out, self._held = self._held, ""
        return self._let_through(out, redact)

    def reset(self) -> None:
        """Forget the text (a restarted stream)."""
        self._held = self._before = ""

    def _let_through(self, text: str, redact: Callable[[str], str]) -> str:
        if not text:
            return ""
        before, self._before = self._before, (self._before + text)[-CONTEXT:]
        shown_before, shown = redact(before), redact(before + text)
        if shown.startswith(shown_before):
            return shown[len(shown_before) :]
        return redact(text)  # a match began in what was printed already: redact this alone


class MarkdownStream:
    """The books of a streamed markdown answer, kept line by line.

    Blocks end at a blank line outside a code fence; a fence at the margin is a block of its
    own (it renders apart from the text around it, so a long one is rendered a few lines at a
    time: `code_info`). Of the block being written, the lines whose newline has arrived are
    finished, except a table's: a table's columns are laid out from all its rows, so its lines
    are `settled` only once a line that is not a row follows. The line still being written is
    `partial`.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a restarted stream)."""
        self._finished: list[str] = []
        self._lines: list[str] = []
        self._partial = ""
        self._fence = ""

    @property
    def block(self) -> str:
        """The finished lines of the block being written."""
        return "\n".join(self._lines)

    @property
    def settled(self) -> str:
        """The lines of `block` that can be printed for good: all but a table still growing."""
        lines = self._lines
        if not self._fence:
            end = len(lines)
            while end and lines[end - 1].lstrip().startswith("|"):
                end -= 1
            lines = lines[:end]
        return "\n".join(lines)

    @property
    def in_fence(self) -> bool:
        """Whether the lines so far leave a code fence open."""
        return bool(self._fence)

    @property
    def partial(self) -> str:
        """The line being written (its newline has not arrived)."""
        return self._partial

    def feed(self, text: str) -> None:
        """Add streamed ``text``."""
        if "\n" not in text:
            self._partial += text
            return
        *complete, self._partial = (self._partial + text).split("\n")
        for line in complete:
            self._add(line)

    def take_finished(self) -> list[str]:
        """The blocks ended since the last call, oldest first: the first one is the block that
        was being written then."""
        finished, self._finished = self._finished, []
        return finished

    def flush(self) -> list[str]:
        """The answer is over: every block not taken yet, the last one with its partial line."""
        if self._partial:
            self._lines.append(self._partial)
        self._end_block()
        finished = self._finished
        self.reset()
        return finished

    def _add(self, line: str) -> None:
        line = line.removesuffix("\r")
        if self._fence:
            self._lines.append(line)
            if _closes(line, self._fence):
                self._fence = ""
                if code_info(self._lines[0]) is not None:
                    self._end_block()
        elif not line.strip():
            self._end_block()
        else:
            self._fence = _opens(line)
            if self._fence and code_info(line) is not None:
                self._end_block()
            self._lines.append(line)

    def _end_block(self) -> None:
        if any(line.strip() for line in self._lines):
            self._finished.append(self.block)
        self._lines = []


def code_info(block: str) -> str | None:
    """The language of a block that is a code fence at the margin ("" if it names none); None
    for any other block."""
    first = block.split("\n", 1)[0]
    fence = _opens(first)
    if not fence or not first.startswith(fence):
        return None
    return first[len(fence) :].strip().split(" ", 1)[0]


def closing_fence(block: str) -> str:
    """The line that would close a code fence left open at the end of ``block`` ("" if none)."""
    fence = ""
    for line in block.split("\n"):
        if fence:
            if _closes(line, fence):
                fence = ""
        else:
            fence = _opens(line)
    return fence


def whole_words(line: str) -> str:
    """``line`` up to its last whitespace: a word still arriving may be a secret's start."""
    if not line or line[-1].isspace():
        return line.removesuffix("\r")
    return line[: len(line) - len(line.rsplit(None, 1)[-1])]


def _opens(line: str) -> str:
    """The fence a line opens (its backticks or tildes), or ""."""
    match = _FENCE.match(line)
    if match is None or (match.group(1)[0] == "`" and "`" in line[match.end() :]):
        return ""
    return match.group(1)


def _closes(line: str, fence: str) -> bool:
    match = _FENCE.match(line)
    return (
        match is not None
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= len(fence)
        and not line[match.end() :].strip()
    )
