"""What to write to a terminal to turn the rows it shows into others: the cells that differ.

The painter knows the rows of an area at the bottom of the output as cells (a character and
its style) and where the cursor is in it, and answers with escape sequences that are all
relative to the cursor, so it needs no answer from the terminal. A painted row that is printed
for good leaves the area at its top; the area's last row (a status line) moves down when the
area grows, by inserting lines above it rather than writing it again.

Between two paints the cursor rests at the start of the area's first row. Most terminals
rewrap their lines when their width changes, so after a resize the rows under the area's top
may take more lines, or fewer, than were drawn; the start of the first row is the one place
that stays where it was, and clearing from there clears the whole area. Resting anywhere
lower, the cursor would go up too few lines, and the area's top would stay on the screen
above its new drawing: the answer so far, twice. tmux keeps the blank rows under the text, so
the lines a narrower width adds push the top rows into its scrollback, the area's first row
with them if the area grew by more lines than there are above it: an answer's area is kept
to the row being written (`agent.terminal.answer_view`) for that.
"""

from __future__ import annotations

from collections.abc import Iterable
from unicodedata import east_asian_width

from rich.cells import get_character_cell_size
from rich.color import ColorSystem
from rich.segment import Segment
from rich.style import Style

from agent.terminal.console import visible

Cell = tuple[str, Style | None]
"""One column: its character ("" for the right half of a wide one) and style."""

BLANK: Cell = (" ", None)
CSI = "\x1b["


def to_cells(row: Iterable[Segment], width: int) -> list[Cell]:
    """A rendered row as at most ``width`` cells; a space that shows as one is `BLANK`."""
    cells: list[Cell] = []
    for text, style, control in row:
        if control:
            continue
        plain = style is None or not _shows_on_space(style)
        for char in visible(text):
            size = get_character_cell_size(char)
            if size == 0:  # a combining mark goes with the character before it
                if cells:
                    cells[-1] = (cells[-1][0] + char, cells[-1][1])
                continue
            if len(cells) + size > width:
                return cells
            cells.append(BLANK if char == " " and plain else (char, style or None))
            if size == 2:
                cells.append(("", style or None))
    return cells


class AreaPainter:
    """The rows an area shows and the cursor in it; `paint` says what changes them.

    Rows are indexed from the area's top; the cursor may rest on a row printed for good just
    above it (a negative index). With no area, the cursor is at the start of the line where
    it would begin.
    """

    def __init__(self, color_system: ColorSystem | None, no_color: bool = False) -> None:
        self.color_system = color_system
        self.no_color = no_color
        self.rows: list[list[Cell]] = []
        self._row = 0
        self._col: int | None = 0
        """The cursor's column; None where it is not known (after inserting lines, or at the
        right edge, where the next character would wrap)."""

    def paint(self, new: list[list[Cell]], keep: int, height: int, width: int) -> str:
        """Turn the area into ``new``: its first rows are printed for good, its last ``keep``
        rows stay as the area. More than ``height`` rows are written out whole."""
        old = self.rows
        if not new:
            return self.erase()
        if not old or len(new) > height:
            out = self.erase() + "\r\n".join(self.span(row, 0, len(row)) for row in new)
            self.rows, self._row, self._col = new, len(new) - 1, None
        else:
            out = self._resize(len(new))
            for index, row in enumerate(new):
                out += self._change(index, self.rows[index], row, width)
            self.rows = new
        if keep == 0:  # nothing stays: the cursor goes under what was printed
            out += self._go(len(new) - 1, 0) + "\n"
            self.rows, self._row, self._col = [], 0, 0
            return out
        self.rows = new[len(new) - keep :]
        self._row -= len(new) - keep
        return out + self._go(0, 0)

    def erase(self) -> str:
        """Clear the area; the cursor goes to the start of its first row (where it rests)."""
        if not self.rows:
            return ""
        self._col = None  # from the margin: a resize may have moved the cursor along its row
        out = self._go(0, 0) + CSI + "J"
        self.rows, self._row, self._col = [], 0, 0
        return out

    def lift(self) -> tuple[int, list[list[Cell]]]:
        """Forget the area, for the caller to clear: how many rows the cursor goes down
        (negative: up) to the start of its last row, and the rows it showed."""
        down, rows = len(self.rows) - 1 - self._row, self.rows
        self.rows, self._row, self._col = [], 0, 0
        return down, rows

    def drawn(self, rows: list[list[Cell]]) -> None:
        """The area was written whole from the start of a line, and the cursor taken back to
        the start of its first row."""
        self.rows, self._row, self._col = rows, 0, 0

    def span(self, row: list[Cell], start: int, end: int) -> str:
        """Cells ``start`` to ``end`` of ``row`` as text with its styles; a blank between two
        cells takes their style, so a run of words is one style change, not one a word."""
        return "".join(self._styled(text, style) for text, style in runs(row, start, end))

    def _styled(self, text: str, style: Style | None) -> str:
        if style is None or self.color_system is None:
            return text
        if self.no_color:
            style = style.without_color
        return style.render(text, color_system=self.color_system)

    def _resize(self, size: int) -> str:
        """Lines inserted or deleted above the last row, so the area has ``size`` rows."""
        old = self.rows
        grow = size - len(old)
        last = len(old) - 1
        if grow > 0:  # the newlines make room under the area (scrolling at the screen's end)
            out = self._go(last, 0) + "\n" * grow + f"{CSI}{grow}A{CSI}{grow}L"
            self.rows = old[:-1] + [[] for _ in range(grow)] + old[-1:]
        elif grow < 0:
            out = self._go(last + grow, 0) + f"{CSI}{-grow}M"
            self.rows = old[: size - 1] + old[-1:]
        else:
            return ""
        self._col = None
        return out

    def _change(self, index: int, before: list[Cell], after: list[Cell], width: int) -> str:
        """What turns row ``index`` from ``before`` into ``after``; "" if they are the same."""
        end_before, end_after = _extent(before), _extent(after)
        first, limit = 0, min(end_before, end_after)
        while first < limit and before[first] == after[first]:
            first += 1
        if first == end_before == end_after:
            return ""
        if any(_uncertain(cell) for cell in after[:first]):
            first = 0  # a terminal may draw such a character wider: count from the margin
        while 0 < first < len(after) and after[first][0] == "":
            first -= 1  # not into the middle of a wide character
        last = end_after
        if end_before == end_after:
            while last > first and before[last - 1] == after[last - 1]:
                last -= 1
            while last < end_after and after[last][0] == "":
                last += 1
        out = self._go(index, first) + self.span(after, first, last)
        self._col = last if last < width else None
        if end_before > end_after:
            out += CSI + "K"
        return out

    def _go(self, row: int, col: int) -> str:
        out = ""
        if row < self._row:
            out += f"{CSI}{self._row - row}A"
        elif row > self._row:
            out += f"{CSI}{row - self._row}B"
        if col != self._col:
            if col == 0:
                out += "\r"
            elif self._col is not None and col > self._col:
                out += f"{CSI}{col - self._col}C"
            else:
                out += f"{CSI}{col + 1}G"
        self._row, self._col = row, col
        return out


def runs(row: list[Cell], start: int, end: int) -> Iterable[tuple[str, Style | None]]:
    """Cells ``start`` to ``end`` of ``row`` as (text, style) runs."""
    index = start
    while index < end:
        style = row[index][1]
        stop = index + 1
        while stop < end:
            cell = row[stop]
            if cell[1] != style and not (cell == BLANK and _blank_joins(row, stop, end, style)):
                break
            stop += 1
        yield "".join(char for char, _ in row[index:stop]), style
        index = stop


def _blank_joins(row: list[Cell], at: int, end: int, style: Style | None) -> bool:
    """Whether the blanks from ``at`` lead to a cell of ``style`` (they are drawn in it)."""
    if style is not None and _shows_on_space(style):
        return False
    while at < end and row[at] == BLANK:
        at += 1
    return at < end and row[at][1] == style


def _shows_on_space(style: Style) -> bool:
    """Whether a space in ``style`` looks different from a plain one."""
    background = style.bgcolor is not None and not style.bgcolor.is_default
    return bool(background or style.reverse or style.underline or style.strike)


def _uncertain(cell: Cell) -> bool:
    """A cell whose width terminals may disagree on (emoji, a wide or combined character)."""
    char = cell[0]
    return not char.isascii() and (len(char) != 1 or east_asian_width(char) in ("W", "F"))


def _extent(row: list[Cell]) -> int:
    """Where ``row``'s last visible cell ends."""
    end = len(row)
    while end and row[end - 1] == BLANK:
        end -= 1
    return end
