"""A long line's rows are printed as soon as they are complete, so the live part of an answer
is the row still filling: a resize then has a row to redraw, not the whole line. Printed early
or not, the rows are those of the whole answer rendered at once."""

from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment

from agent.terminal.answer_view import AnswerView, Row
from agent.terminal.open_markup import has_open_markup
from sessions import Redactor

WORDS = " ".join(f"word{n}" for n in range(1, 41))
LONG_ANSWER = f"""Intro line.

{WORDS} and `a code span that wraps {WORDS[:30]}` then **bold {WORDS[:50]}** and [a link \
with words](https://example.com/x) after {WORDS[:80]}
- an item {WORDS} with *emphasis {WORDS[:20]}* end
> a quote {WORDS}
## a heading {WORDS[:60]}
1. {WORDS[:100]} snake_case_name and 2 * 3 and a < b ~/path and `ls | wc -l` {WORDS[:70]}
Closing {WORDS}"""


def console(width: int = 40) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="256")


def text(rows: list[Row]) -> list[str]:
    return ["".join(segment.text for segment in row).rstrip() for row in rows]


def styled(rows: list[Row]) -> list[list[tuple[str, object]]]:
    return [
        [(s.text, s.style or None) for s in Segment.simplify(row) if s.text.strip() or s.style]
        for row in rows
    ]


def streamed(view: AnswerView, pieces: list[str]) -> tuple[list[Row], list[list[Row]]]:
    printed: list[Row] = []
    lives: list[list[Row]] = []
    for piece in pieces:
        view.feed(piece)
        rows, live = view.take()
        printed += rows
        lives.append(live)
    return printed + view.end(), lives


def at_once(answer: str, width: int = 40) -> list[Row]:
    view = AnswerView(console(width), lambda source: source)
    view.feed(answer)
    return view.end()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(LONG_ANSWER)), max_size=30))
def test_rows_printed_before_their_line_ends_are_those_of_the_whole_answer(
    cuts: list[int],
) -> None:
    bounds = [0, *sorted(cuts), len(LONG_ANSWER)]
    pieces = [LONG_ANSWER[start:end] for start, end in itertools.pairwise(bounds)]

    printed, _ = streamed(AnswerView(console(), lambda source: source), pieces)

    assert styled(printed) == styled(at_once(LONG_ANSWER))


def test_a_long_line_keeps_only_the_row_being_written_live() -> None:
    view = AnswerView(console(), lambda source: source)
    pieces = [WORDS[i : i + 5] for i in range(0, len(WORDS), 5)]

    printed, lives = streamed(view, pieces)

    assert max(len(live) for live in lives) == 1
    assert text(printed) == text(at_once(WORDS))
    assert len(printed) > 5


def test_a_row_with_a_span_still_open_stays_live_until_it_closes() -> None:
    view = AnswerView(console(), lambda source: source)
    view.feed(f"see `{WORDS[:60]} ")

    rows, live = view.take()

    assert rows == []  # the backtick may yet start a code span
    assert len(live) > 1
    view.feed("end` and more words to come ")
    rows, live = view.take()
    assert "`" not in "".join(text(rows + live))
    assert len(live) == 1


def test_after_a_resize_the_line_goes_on_from_a_row_of_its_own() -> None:
    screen = console(60)
    view = AnswerView(screen, lambda source: source)
    half = len(WORDS) // 2
    view.feed(WORDS[:half])
    first, _ = view.take()
    screen.width = 30
    view.feed(WORDS[half:] + "\n")

    rows, _ = view.take()

    shown = " ".join(text(first + rows)).split()
    assert shown == WORDS.split()  # each word once, whatever the widths
    assert all(len(row) <= 30 for row in text(rows))


PROSE = f"{WORDS}\n{WORDS[:90]}\n\n- an item {WORDS}\n> {WORDS}\nThe end."


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=len(PROSE)), max_size=20),
    st.integers(min_value=0, max_value=20),
    st.sampled_from([(60, 30), (30, 60), (45, 20)]),
)
def test_whenever_the_terminal_is_resized_each_word_is_printed_once(
    cuts: list[int], resize_at: int, widths: tuple[int, int]
) -> None:
    bounds = [0, *sorted(cuts), len(PROSE)]
    pieces = [PROSE[start:end] for start, end in itertools.pairwise(bounds)]
    screen = console(widths[0])
    view = AnswerView(screen, lambda source: source)

    printed: list[Row] = []
    for index, piece in enumerate(pieces):
        if index == resize_at:
            screen.width = widths[1]
        view.feed(piece)
        printed += view.take()[0]
    printed += view.end()

    words = [word for line in text(printed) for word in line.split() if word not in ("•", "▌")]
    assert words == [word for word in PROSE.split() if word not in ("-", ">")]


@pytest.mark.parametrize(
    ("answer", "secret"),
    [
        # "Bearer" ends the first row; the key, too long to join it, starts the second.
        (f"{WORDS[:29]} Bearer {'k' * 30} and then some more words at the end\n", "k" * 30),
        (f"{WORDS[:23]} say correct horse battery staple and then more words\n", "horse"),
    ],
)
def test_a_key_by_a_row_break_is_still_redacted(answer: str, secret: str) -> None:
    redact = Redactor({"SOME_PASSWORD": "correct horse battery staple"}).text
    view = AnswerView(console(), redact)

    printed, lives = streamed(view, [answer[i : i + 3] for i in range(0, len(answer), 3)])

    shown = text(printed) + [line for live in lives for line in text(live)]
    assert not any(secret[:8] in line for line in shown)
    assert any("[redacted" in line for line in text(printed))
    assert " ".join(text(printed)).split()[-3:] == answer.split()[-3:]


def test_open_markup_is_a_delimiter_that_could_still_start_a_span() -> None:
    assert has_open_markup("a `code")
    assert not has_open_markup("a `code` b")
    assert has_open_markup("**bold")
    assert not has_open_markup("**bold** b")
    assert has_open_markup("[text](http://x")
    assert not has_open_markup("[text](http://x) and [x] box")
    assert not has_open_markup("snake_case and 2 * 3 and a < b and ~/home")
    assert has_open_markup("a <span")
    assert has_open_markup("~~gone")
