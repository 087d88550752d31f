"""The live area's painter, played on an emulated terminal: whatever the frames, the screen
shows every row printed for good, in order, then the area; and it writes only what changed."""

from __future__ import annotations

import pyte
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.color import ColorSystem
from rich.segment import Segment
from rich.style import Style

from agent.terminal.area_painter import AreaPainter, Cell, to_cells

WIDTH, HEIGHT = 40, 12
WORDS = ["alpha", "beta", "gamma", "δέλτα", "全角", "x", "longer-word", "✓", "🙂"]


class Terminal:
    """A pyte screen with its scrolled-off rows; newlines arrive as a tty sends them."""

    def __init__(self) -> None:
        self.screen = pyte.HistoryScreen(WIDTH, HEIGHT, history=1000)
        self.stream = pyte.Stream(self.screen)

    def feed(self, text: str) -> None:
        self.stream.feed(text.replace("\n", "\r\n"))  # the tty's onlcr

    def lines(self) -> list[str]:
        above = [
            "".join(line[x].data for x in range(WIDTH)).rstrip() for line in self.screen.history.top
        ]
        rows = above + [line.rstrip() for line in self.screen.display]
        while rows and not rows[-1]:
            rows.pop()
        return rows


def row(text: str, style: Style | None = None) -> list[Cell]:
    return to_cells([Segment(text, style)], WIDTH)


def plain(cells: list[Cell]) -> str:
    return "".join(char for char, _ in cells).rstrip()


lines = st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join)
frames = st.lists(
    st.tuples(st.lists(lines, max_size=13), st.lists(lines, max_size=4), lines),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(frames)
def test_the_screen_shows_what_was_printed_then_the_area(steps: list) -> None:  # type: ignore[type-arg]
    painter = AreaPainter(ColorSystem.EIGHT_BIT)
    terminal = Terminal()
    printed: list[str] = []
    area: list[str] = []
    for done, body, status in steps:
        new = [row(text) for text in done] + [row(text) for text in body]
        new.append(row("⠋ " + status, Style(color="cyan")))
        terminal.feed(painter.paint(new, len(body) + 1, HEIGHT - 1, WIDTH))
        printed += [plain(cells) for cells in new[: len(done)]]
        area = [plain(cells) for cells in new[len(done) :]]
        expected = printed + area
        while expected and not expected[-1]:
            expected.pop()
        assert terminal.lines() == expected

    terminal.feed(painter.erase())
    while printed and not printed[-1]:
        printed.pop()
    assert terminal.lines() == printed


def test_a_finished_line_the_area_shows_costs_its_last_word_not_the_status_line() -> None:
    painter = AreaPainter(ColorSystem.EIGHT_BIT)
    terminal = Terminal()
    status = row("⠋ writing · anthropic:claude · 3s · Ctrl-C to interrupt")
    terminal.feed(painter.paint([row("The first line of the"), [], status], 3, 11, WIDTH))

    new = [row("The first line of the answer."), row("The"), [], status]
    out = painter.paint(new, 3, 11, WIDTH)
    terminal.feed(out)

    assert "writing" not in out
    assert "first" not in out
    assert len(out) < 40
    assert terminal.lines() == ["The first line of the answer.", "The", "", plain(status)]


def test_a_wide_or_emoji_character_before_a_change_has_its_row_written_from_the_margin() -> None:
    painter = AreaPainter(None)
    painter.paint([row("🙂 hello"), row("status")], 2, 11, WIDTH)

    out = painter.paint([row("🙂 hello world"), row("status")], 2, 11, WIDTH)

    assert "🙂 hello world" in out  # a terminal may draw the emoji one column wide


def test_blanks_between_words_of_one_style_keep_one_style_change() -> None:
    painter = AreaPainter(ColorSystem.STANDARD)
    red = Style(color="red")
    cells = to_cells([Segment("one", red), Segment(" "), Segment("two", red)], WIDTH)

    out = painter.paint([cells], 1, 11, WIDTH)

    assert out.count("\x1b[31m") == 1
    assert "one two" in out


def test_a_space_with_a_background_is_not_blank() -> None:
    cells = to_cells([Segment("  ", Style(bgcolor="blue")), Segment("  ")], WIDTH)

    assert [char for char, style in cells if style is not None] == [" ", " "]
    assert cells[2:] == [(" ", None), (" ", None)]
