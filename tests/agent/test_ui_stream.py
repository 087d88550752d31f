"""Streamed plain text is redacted as it arrives, whatever pieces a key comes in."""

from __future__ import annotations

import io
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agent.terminal.stream import HOLD_LIMIT, RedactingStream
from agent.terminal.ui import ConsoleUI
from providers import TextDelta, ToolResultBlock, ToolUseBlock
from sessions import Redactor

KEY = "sk-ant-api03-" + "k" * 40
TOKEN = "eyJhbGciOiJIUzI1NiJ9.payload.signature"
ANSWER = f"Your key is {KEY}, and the header is Authorization: Bearer {TOKEN} — keep both safe.\n"
REDACT = Redactor({"ANTHROPIC_API_KEY": KEY}).text


def streamed(pieces: list[str]) -> str:
    stream = RedactingStream()
    return "".join(stream.feed(piece, REDACT) for piece in pieces) + stream.flush(REDACT)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(ANSWER)), max_size=12))
def test_no_split_of_the_answer_shows_a_key_or_a_token(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(ANSWER)]
    pieces = [ANSWER[start:end] for start, end in itertools.pairwise(bounds)]

    shown = streamed(pieces)

    assert shown == REDACT(ANSWER)
    assert KEY[:12] not in shown
    assert TOKEN[:8] not in shown


def test_text_is_let_through_word_by_word_and_the_rest_at_the_end() -> None:
    stream = RedactingStream()
    assert stream.feed("Hello wor", REDACT) == "Hello "
    assert stream.feed("ld", REDACT) == ""
    assert stream.feed("!\nNext", REDACT) == "world!\n"
    assert stream.flush(REDACT) == "Next"


def test_a_long_run_without_whitespace_is_not_held_for_ever() -> None:
    stream = RedactingStream()
    assert stream.feed("", REDACT) == ""
    assert stream.feed("x" * (HOLD_LIMIT + 1), REDACT) == "x" * (HOLD_LIMIT + 1)


def test_plain_mode_streams_the_answer_with_the_key_hidden() -> None:
    buffer = io.StringIO()
    ui = ConsoleUI(Console(file=buffer, width=200, force_terminal=False), redact=REDACT)
    ui.begin_turn()
    for piece in ["Your key is ", KEY[:9], KEY[9:30], KEY[30:], ", keep it.", " Now"]:
        ui.on_delta(TextDelta(text=piece))
    ui.on_tool_result(
        ToolUseBlock(id="t1", name="run_command", input={"command": "ls"}),
        ToolResultBlock(tool_use_id="t1", content="a.txt"),
    )
    ui.finish()

    assert buffer.getvalue() == (
        "Your key is [redacted:ANTHROPIC_API_KEY], keep it. Now\n✓ run_command(ls) — a.txt\n"
    )
