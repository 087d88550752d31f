"""Streamed answer text: split into finished markdown blocks, or let through redacted.

Re-rendering a whole answer on every delta gets slow and cannot scroll past the screen; so
only the tail lives in the live area, and each block is committed once a blank line outside
a code fence closes it (`MarkdownStream`). Printed as plain text, a piece is printed for
good, so the end that could still become a secret is held back (`RedactingStream`).
"""

from __future__ import annotations

from collections.abc import Callable

_FENCES = ("```", "~~~")

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
    """Accumulates streamed text and hands out blocks that can no longer change."""

    def __init__(self) -> None:
        self._tail = ""
        self._in_fence = False
        self._fence = ""
        self._scanned = 0

    @property
    def tail(self) -> str:
        """Text received but not yet committed."""
        return self._tail

    def feed(self, text: str) -> list[str]:
        """Add streamed ``text``; return the blocks it completed (possibly none)."""
        self._tail += text
        blocks: list[str] = []
        while True:
            cut = self._next_cut()
            if cut is None:
                return blocks
            block, self._tail = self._tail[:cut], self._tail[cut:]
            self._scanned = 0
            if block.strip():
                blocks.append(block.strip("\n"))

    def flush(self) -> str:
        """Return whatever is left (the end of an answer) and start over."""
        rest = self._tail.strip("\n")
        self.reset()
        return rest

    def reset(self) -> None:
        """Forget everything (a restarted stream)."""
        self._tail = ""
        self._in_fence = False
        self._fence = ""
        self._scanned = 0

    def _next_cut(self) -> int | None:
        """Index just past a blank line that ends a block outside a fence, if any."""
        position = self._scanned
        while True:
            end = self._tail.find("\n", position)
            if end < 0:
                self._scanned = position
                return None
            line = self._tail[position:end]
            stripped = line.strip()
            if stripped.startswith(_FENCES):
                marker = stripped[:3]
                if not self._in_fence:
                    self._in_fence, self._fence = True, marker
                elif marker == self._fence and stripped.strip("`~") == "":
                    self._in_fence = False
            elif not stripped and not self._in_fence and self._tail[:position].strip():
                return end + 1
            position = end + 1
