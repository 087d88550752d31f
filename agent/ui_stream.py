"""Split streamed markdown into finished blocks (printed for good) and a tail (still growing).

Re-rendering a whole answer on every delta gets slow and cannot scroll past the screen; so
only the tail lives in the live area, and each block is committed once a blank line outside
a code fence closes it.
"""

from __future__ import annotations

_FENCES = ("```", "~~~")


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
