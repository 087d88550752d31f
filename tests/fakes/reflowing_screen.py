"""An emulated terminal that rewraps its lines when its width changes, as most terminals do.

pyte's `resize` cuts lines at the new width and keeps their count, as xterm does. Most
terminals people use (VTE's, iTerm2, Windows Terminal, kitty, WezTerm, tmux) reflow instead:
a line wider than the new width wraps onto the next rows, and rows that had wrapped join
again when the terminal widens, the cursor moving with its cell. A program that moves the
cursor up by the rows it drew, after such a resize, lands somewhere else; a test of how a
program survives a resize needs this behaviour to see it.
"""

from __future__ import annotations

from typing import Any

import pyte
from pyte.screens import Char, StaticDefaultDict

Line = StaticDefaultDict[int, Char]


class ReflowingScreen(pyte.HistoryScreen):
    """A `pyte.HistoryScreen` that rewraps its lines at a resize (``reflow=False``: cuts
    them, as xterm does). A row the cursor reached by wrapping past the right margin is
    marked as continuing the row above it."""

    _drawing = False

    def draw(self, data: str) -> None:
        self._drawing = True
        try:
            super().draw(data)
        finally:
            self._drawing = False

    def linefeed(self) -> None:
        super().linefeed()
        if self._drawing:  # text ran past the right margin and wrapped onto this row
            _mark(self.buffer[self.cursor.y], continued=True)

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        super().erase_in_line(how, private)
        if how == 2 or (how == 0 and self.cursor.x == 0):
            _mark(self.buffer[self.cursor.y], continued=False)

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        super().erase_in_display(how, *args, **kwargs)
        rows = {0: range(self.cursor.y + 1, self.lines), 1: range(self.cursor.y)}
        for y in rows.get(how, range(self.lines)):
            _mark(self.buffer[y], continued=False)

    def resize(
        self,
        lines: int | None = None,
        columns: int | None = None,
        *,
        reflow: bool = True,
        anchor_bottom: bool = False,
    ) -> None:
        """Take the new size. ``anchor_bottom`` rewraps as tmux does: the blank rows under
        the text are kept, so the rows a narrower width adds push the top rows into the
        history, the cursor's row with them if it is among them (the cursor then stays on
        the screen's first row)."""
        lines, columns = lines or self.lines, columns or self.columns
        if not reflow or columns == self.columns:
            super().resize(lines, columns)
            return
        rows, cursor_row, cursor_col = self._rewrapped(columns)
        if anchor_bottom:
            while len(rows) < self.lines + len(self.history.top):
                rows.append(StaticDefaultDict(self.default_char))
        while not anchor_bottom and len(rows) > cursor_row + 1 and not rows[-1]:
            rows.pop()  # blank rows under the cursor are not kept
        top = max(0, len(rows) - lines)
        if not anchor_bottom:
            top = min(top, cursor_row)
        self.history.top.clear()
        self.history.top.extend(rows[:top])
        self.buffer.clear()
        for y, line in enumerate(rows[top : top + lines]):
            self.buffer[y] = line
        self.lines, self.columns = lines, columns
        if cursor_row < top:  # its row went into the history
            cursor_row, cursor_col = top, 0
        self.cursor.y, self.cursor.x = cursor_row - top, cursor_col
        self.set_margins()
        self.dirty.update(range(lines))

    def _rewrapped(self, columns: int) -> tuple[list[Line], int, int]:
        """Every row (history and screen) rewrapped at ``columns``, and the cursor's new row
        and column among them."""
        old = [*self.history.top, *(self.buffer[y] for y in range(self.lines))]
        at = len(self.history.top) + self.cursor.y
        logical: list[list[Char]] = []
        cursor: tuple[int, int] = (0, 0)  # (logical line, offset in it)
        for index, line in enumerate(old):
            cells = [line[x] for x in range(self.columns)]
            if logical and getattr(line, "continued", False):
                logical[-1] += cells
            else:
                logical.append(cells)
            if index == at:
                cursor = (len(logical) - 1, len(logical[-1]) - self.columns + self.cursor.x)
        rows: list[Line] = []
        cursor_row = cursor_col = 0
        for number, cells in enumerate(logical):
            end = len(cells)
            while end and cells[end - 1] == self.default_char:
                end -= 1
            if number == cursor[0]:
                end = max(end, cursor[1])
                row, cursor_col = divmod(cursor[1], columns)
                cursor_row = len(rows) + row
            for start in range(0, max(end, 1), columns):
                line: Line = StaticDefaultDict(self.default_char)
                line.update(enumerate(cells[start : min(start + columns, end)]))
                _mark(line, continued=start > 0)
                rows.append(line)
        while len(rows) <= cursor_row:
            rows.append(StaticDefaultDict(self.default_char))
        return rows, cursor_row, cursor_col


def _mark(line: Line, *, continued: bool) -> None:
    line.continued = continued  # type: ignore[attr-defined]
