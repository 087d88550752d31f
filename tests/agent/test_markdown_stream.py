"""A streamed answer is cut into lines that are printed once, as they finish, and rendered as
the whole answer would be; the line being written shows up to its last whole word."""

from __future__ import annotations

import io
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment

from agent.terminal.answer_view import AnswerView, Row
from agent.terminal.stream import MarkdownStream, closing_fence, code_info, whole_words
from sessions import Redactor

ANSWER = """# Plan

Some **bold** words and `code`.
A second line of the same paragraph.

- first item
- second item with *emphasis*
  and its continuation
1. one
2. two

Here is the loop:
```python
def run(budget):
    total = 0

    for step in range(budget):
        total += step  # a comment
    return total
```
After the code.
| name | value |
|------|-------|
| a    | 1     |
| b    | 22    |
Last line without a newline"""


def console(width: int = 60) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="256")


def text(rows: list[Row]) -> list[str]:
    return ["".join(segment.text for segment in row).rstrip() for row in rows]


def streamed(pieces: list[str], width: int = 60) -> tuple[list[Row], list[list[Row]]]:
    """The rows printed for good, and the live rows after each piece."""
    view = AnswerView(console(width), lambda source: source)
    printed: list[Row] = []
    lives: list[list[Row]] = []
    for piece in pieces:
        view.feed(piece)
        rows, live = view.take()
        printed += rows
        lives.append(live)
    return printed + view.end(), lives


def _styled(rows: list[Row]) -> list[list[tuple[str, object]]]:
    """Rows as (text, style) runs, trailing padding dropped: what a terminal shows."""
    return [
        [(s.text, s.style) for s in Segment.simplify(row) if s.text.strip() or s.style]
        for row in rows
    ]


# -- the books: MarkdownStream -----------------------------------------------------------


def test_blocks_end_at_blank_lines_outside_a_fence() -> None:
    stream = MarkdownStream()
    stream.feed("para one\nstill one\n\n  ~~~\ncode\n\nmore code\n")

    assert stream.take_finished() == ["para one\nstill one"]
    assert stream.block == "  ~~~\ncode\n\nmore code"  # an indented fence keeps its blank
    stream.feed("  ~~~\n\ntail")
    assert stream.take_finished() == ["  ~~~\ncode\n\nmore code\n  ~~~"]
    assert (stream.block, stream.partial) == ("", "tail")
    assert stream.flush() == ["tail"]


def test_a_fence_at_the_margin_is_a_block_of_its_own() -> None:
    stream = MarkdownStream()
    stream.feed("Here:\n````py\nx = 1\n\n```\n````\nafter\n")

    assert stream.take_finished() == ["Here:", "````py\nx = 1\n\n```\n````"]
    assert stream.block == "after"
    assert code_info("```py\nx") == "py"
    assert code_info("~~~\nx") == ""
    assert code_info("  ```\nx") is None  # indented: inside a list, rendered with it
    assert code_info("text") is None


def test_a_table_is_settled_only_once_a_line_that_is_not_a_row_follows() -> None:
    stream = MarkdownStream()
    stream.feed("Totals:\n| a | b |\n|---|---|\n| 1 | 2 |\n")

    assert stream.block.endswith("| 1 | 2 |")
    assert stream.settled == "Totals:"
    stream.feed("That is all.\n")
    assert stream.settled == stream.block


def test_a_line_is_finished_by_its_newline_even_split_or_with_a_carriage_return() -> None:
    stream = MarkdownStream()
    stream.feed("first\r")
    assert (stream.block, stream.partial) == ("", "first\r")
    stream.feed("\nsec")
    assert (stream.block, stream.partial) == ("first", "sec")
    stream.reset()
    assert (stream.block, stream.partial, stream.flush()) == ("", "", [])


def test_closing_fence_and_whole_words() -> None:
    assert closing_fence("```py\nx = 1") == "```"
    assert closing_fence("````\nx\n```") == "````"  # a shorter fence does not close it
    assert closing_fence("~~~\nx\n~~~") == ""
    assert closing_fence("``` not a fence ``` x") == ""
    assert whole_words("the key is sk-ant-ap") == "the key is "
    assert whole_words("done ") == "done "
    assert whole_words("nospace") == ""


# -- the rows: AnswerView ----------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(ANSWER)), max_size=25))
def test_however_the_answer_is_cut_the_printed_rows_are_the_same(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(ANSWER)]
    pieces = [ANSWER[start:end] for start, end in itertools.pairwise(bounds)]

    printed, _ = streamed(pieces)
    whole, _ = streamed([ANSWER])

    assert _styled(printed) == _styled(whole)


def test_the_answer_looks_as_markdown_with_its_line_breaks_kept() -> None:
    printed, _ = streamed([ANSWER[i : i + 4] for i in range(0, len(ANSWER), 4)])

    assert text(printed) == [
        "Plan".center(60).rstrip(),
        "",
        "Some bold words and code.",
        "A second line of the same paragraph.",
        "",
        " • first item",
        " • second item with emphasis",
        "   and its continuation",
        "",
        " 1 one",
        " 2 two",
        "",
        "Here is the loop:",
        "",
        "  def run(budget):",
        "      total = 0",
        "",
        "      for step in range(budget):",
        "          total += step  # a comment",
        "      return total",
        "",
        "After the code.",
        "",
        "",
        " name                         value",
        " ──────────────────────────────────",
        " a                            1",
        " b                            22",
        " Last line without a newline",  # a table goes on to a blank line (GitHub's tables)
    ]


def test_code_is_printed_a_line_at_a_time_highlighted_as_in_the_whole_block() -> None:
    view = AnswerView(console(), lambda source: source)
    block = '```python\ndef f():\n    return "x"  # done\n```'
    view.feed(block[:-14])  # up to the second code line's start

    rows, live = view.take()
    whole = view.render_code(block, "python", 0, 60)

    assert text(rows) == ["  def f():"]
    assert _styled(rows) == _styled(whole[:1])
    assert text(live) == ["      return"]
    view.feed(block[-14:] + "\n")
    rows, live = view.take()
    assert _styled(rows) == _styled(whole[1:])
    assert live == []


def test_a_line_is_printed_when_its_newline_arrives_and_the_rest_stays_live() -> None:
    view = AnswerView(console(), lambda source: source)
    view.feed("The first line.\nThe sec")

    rows, live = view.take()

    assert text(rows) == ["The first line."]
    assert text(live) == ["The"]
    view.feed("ond one.\n\nNext")
    rows, live = view.take()
    assert text(rows) == ["The second one."]
    assert live == []  # "Next" may still grow into a longer word
    view.feed(" block")
    assert text(view.take()[1]) == ["", "Next"]  # a blank line before the next block


def test_a_table_is_live_until_it_ends_then_printed_whole() -> None:
    view = AnswerView(console(), lambda source: source)
    view.feed("| a | b |\n|---|---|\n| 1 | 2 |\n")

    rows, live = view.take()

    assert rows == []
    assert " 1  2" in text(live)
    view.feed("\n")
    assert " 1  2" in text(view.take()[0])


def test_a_restarted_stream_says_whether_anything_was_printed() -> None:
    view = AnswerView(console(), lambda source: source)
    view.feed("half a li")
    view.take()
    assert view.reset() is False

    view.feed("a whole line\nand half")
    view.take()
    assert view.reset() is True
    assert view.take() == ([], [])


KEY = "ghp_" + "Q7b" * 12  # a key known by its form only
SECRET_ANSWER = f"Your token: {KEY} — keep it.\n```\nexport TOKEN={KEY}\n```\nDone {KEY}"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SECRET_ANSWER)), max_size=12))
def test_no_cut_of_the_answer_shows_any_part_of_a_key(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(SECRET_ANSWER)]
    pieces = [SECRET_ANSWER[start:end] for start, end in itertools.pairwise(bounds)]
    view = AnswerView(console(), Redactor({}).text)

    shown: list[str] = []
    for piece in pieces:
        view.feed(piece)
        rows, live = view.take()
        shown += text(rows) + text(live)
    shown += text(view.end())

    assert not any("ghp_Q" in line for line in shown)
    assert sum("[redacted]" in line for line in shown) >= 3


def test_a_resized_terminal_gets_the_rest_at_its_new_width() -> None:
    wide = console(60)
    view = AnswerView(wide, lambda source: source)
    view.feed("- one\n- two\n")
    first, _ = view.take()
    wide.width = 30
    view.feed("- three\n")

    rows, _ = view.take()

    assert text(first) == [" • one", " • two"]
    assert text(rows) == [" • three"]
