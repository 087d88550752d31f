"""ConsoleUI rendered into a string: markdown, tool lines, diffs, banners, countdown, plain mode."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agent.engine.outcome import SideModelSwitch
from agent.engine.turn import ContinuationRequested
from agent.terminal.renderables import plain_tool_line, tool_line
from agent.terminal.status_line import StatusLine
from agent.terminal.ui import ConsoleUI, StatusSource
from compaction.events import CompactionApplied, Reason
from compaction.stages import Stage
from providers import ErrorKind, RequestKind, TextDelta, ToolResultBlock, ToolUseBlock, Usage
from providers.provider import StreamReset, ToolUseDelta
from recovery import FallbackActivated, GaveUp, RequestHeld, RetryScheduled, TokensEscalated
from sessions import Redactor
from tests.fakes.clock import VirtualClock
from tools import CheckpointRecorded

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def terminal(width: int = 80, **options: object) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=width, force_terminal=True, **options), buffer  # type: ignore[arg-type]


def plain(text: str) -> str:
    return ANSI.sub("", text).replace("\r", "")


def retry_event(retry_at: float, attempt: int = 2) -> RetryScheduled:
    return RetryScheduled(
        kind=ErrorKind.RATE_LIMIT,
        attempt=attempt,
        max_attempts=8,
        delay=3.0,
        retry_at=retry_at,
        model="anthropic:claude-test",
        provider="anthropic",
    )


def test_streamed_markdown_is_rendered_not_shown_raw() -> None:
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.begin_turn()
    for chunk in ["Some **bold", "** words.\n\n```python\nx = 1\n", "\ny = 2\n```\n\n- a\n- b"]:
        ui.on_delta(TextDelta(text=chunk))
    ui.finish()

    shown = plain(buffer.getvalue())
    assert "Some bold words." in shown
    assert "**" not in shown
    assert "x = 1" in shown
    assert "y = 2" in shown
    assert "```" not in shown
    assert "• a" in shown


def test_a_key_streamed_in_pieces_is_never_shown_on_a_terminal() -> None:
    key = "sk-ant-api03-" + "k" * 40
    console, buffer = terminal()
    ui = ConsoleUI(console, redact=Redactor({"ANTHROPIC_API_KEY": key}).text)
    ui.begin_turn()
    for chunk in ["Your key: ", key[:10], key[10:30], key[30:], " — done.\n\nNext block ", key]:
        ui.on_delta(TextDelta(text=chunk))
        ui.refresh()  # what the live area shows after each piece
    ui.finish()

    shown = plain(buffer.getvalue())
    assert "done." in shown
    assert "Next block" in shown
    assert key[:20] not in shown


def test_plain_mode_prints_the_answer_verbatim_without_escape_codes() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=False)
    ui = ConsoleUI(console)
    ui.begin_turn()
    ui.on_delta(TextDelta(text="Some **bold** text"))
    ui.on_tool_result(
        ToolUseBlock(id="t1", name="run_command", input={"command": "ls"}),
        ToolResultBlock(tool_use_id="t1", content="a.txt\nb.txt"),
    )
    ui.finish()

    assert buffer.getvalue() == "Some **bold** text\n✓ run_command(ls) — 2 lines\n"


def test_tool_lines_fit_a_narrow_terminal() -> None:
    console, buffer = terminal(width=40)
    ui = ConsoleUI(console)
    call = ToolUseBlock(
        id="t1", name="run_command", input={"command": "pytest -q tests/ --maxfail=1 -x " * 3}
    )
    ui.on_tool_result(call, ToolResultBlock(tool_use_id="t1", content="boom " * 30, is_error=True))

    lines = plain(buffer.getvalue()).splitlines()
    assert lines[0].startswith("✗ run_command(pytest")
    assert all(len(line) <= 40 for line in lines)


def test_an_edit_is_shown_as_a_diff_against_the_file_before_the_change(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    target.write_text("def main():\n    return 1\n")
    console, buffer = terminal()
    ui = ConsoleUI(console, workspace=tmp_path)
    ui.begin_turn()
    ui.on_event(CheckpointRecorded(path="app.py", existed_before=True, turn=1, tool_use_id="t1"))
    target.write_text("def main():\n    return 2\n")
    call = ToolUseBlock(
        id="t1",
        name="edit_file",
        input={"path": "app.py", "old_string": "return 1", "new_string": "return 2"},
    )
    ui.on_tool_result(call, ToolResultBlock(tool_use_id="t1", content="Edited app.py."))
    ui.finish()

    shown = plain(buffer.getvalue())
    assert "✓ edit_file(app.py" in shown
    assert "-    return 1" in shown
    assert "+    return 2" in shown
    assert "def main():" in shown  # context line


def test_a_read_file_result_shows_a_highlighted_excerpt() -> None:
    console, buffer = terminal()
    ui = ConsoleUI(console)
    content = "\n".join(f"{n:>6}\tline {n}" for n in range(1, 21))
    ui.on_tool_result(
        ToolUseBlock(id="t1", name="read_file", input={"path": "a.py"}),
        ToolResultBlock(tool_use_id="t1", content=content),
    )

    shown = plain(buffer.getvalue())
    assert "✓ read_file(a.py) — 20 lines" in shown
    assert "line 1" in shown
    assert "line 6" in shown
    assert "line 7" not in shown
    assert "14 more lines" in shown


@pytest.mark.parametrize("path", ["README", "LICENSE", "notes.unknownext", "a.py"])
def test_a_file_of_any_type_gets_an_excerpt(path: str) -> None:
    # Pygments has no lexer for most names without a known extension: plain text then.
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.on_tool_result(
        ToolUseBlock(id="t1", name="read_file", input={"path": path}),
        ToolResultBlock(tool_use_id="t1", content="     1\tfirst\n     2\tsecond"),
    )

    assert "second" in plain(buffer.getvalue())


def test_recovery_banners_are_one_line_each() -> None:
    console, buffer = terminal(width=200)
    ui = ConsoleUI(console)
    ui.on_event(FallbackActivated(from_model="a:x", to_model="b:y", reason="3 overloads"))
    ui.on_event(TokensEscalated(model="a:x", from_tokens=4096, to_tokens=8192))
    ui.on_event(ContinuationRequested(attempt=1, limit=3))
    ui.on_event(
        CompactionApplied(
            stage=Stage.SNIP,
            reason=Reason.PROACTIVE,
            tokens_before=90_000,
            tokens_after=40_000,
            messages_before=30,
            messages_after=30,
        )
    )

    lines = plain(buffer.getvalue()).strip().splitlines()
    assert len(lines) == 4
    assert "Switched from a:x to b:y" in lines[0]
    assert "8192" in lines[1]
    assert "continue (1/3)" in lines[2]
    assert "90,000" in lines[3]


def test_the_countdown_follows_the_clock(clock: VirtualClock) -> None:
    status = StatusLine(
        StatusSource(model=lambda: "anthropic:claude-test", usage=lambda: Usage(input_tokens=1500)),
        clock=clock.now,
    )
    status.waiting(retry_event(retry_at=clock.now() + 3.0))

    first = status.text().plain
    clock.advance(1.2)
    second = status.text().plain
    clock.advance(2.0)

    assert "Rate limited by anthropic" in first
    assert "retrying in 3s (attempt 2/8)" in first
    assert "1.5k tokens" in first
    assert "anthropic:claude-test" in first
    assert "retrying in 2s" in second
    assert "retrying now" in status.text().plain


def test_the_spinner_stands_still_while_answer_text_arrives(clock: VirtualClock) -> None:
    spin = [0.0]
    console, _ = terminal(get_time=lambda: spin[0])
    status = StatusLine(clock=clock.now)

    def frame() -> str:
        spin[0] += 0.1
        return console.render_lines(status, pad=False)[0][0].text

    thinking = {frame() for _ in range(5)}
    status.doing("writing")
    writing = {frame() for _ in range(5)}
    clock.advance(2.0)  # no text for two seconds: the turn may be stuck, the spinner says not
    stalled = {frame() for _ in range(5)}

    assert len(thinking) == 5
    assert len(writing) == 1
    assert len(stalled) == 5


def test_on_a_terminal_retries_count_down_on_the_status_line_without_banners() -> None:
    console, buffer = terminal(width=120)
    ui = ConsoleUI(console, clock=lambda: 0.0)
    ui.bind(StatusSource(model=lambda: "openai:other", usage=Usage))
    ui.begin_turn()
    for attempt in (2, 3, 4):
        ui.on_event(retry_event(retry_at=3.0, attempt=attempt))
    status = ui.status.text().plain
    ui.on_delta(TextDelta(text="ok"))
    ui.finish()

    assert (
        "Rate limited by anthropic — retrying in 3s (attempt 4/8) · anthropic:claude-test" in status
    )
    assert "Rate limited" not in plain(buffer.getvalue())
    assert "retrying in" not in ui.status.text().plain


def test_a_held_request_counts_down_on_a_terminal_and_is_one_line_elsewhere() -> None:
    held = RequestHeld(model="anthropic:claude-test", delay=12.0, retry_at=12.0, server=False)
    console, buffer = terminal(width=120)
    ui = ConsoleUI(console, clock=lambda: 0.0)
    ui.begin_turn()
    ui.on_event(held)
    status = ui.status.text().plain
    ui.finish()
    out, _ = terminal(width=120)
    err, lines = terminal(width=120)
    ConsoleUI(out, err, clock=lambda: 0.0).on_event(held)

    assert "pacing under the rate limit — sending in 12s" in status
    assert "⏳" not in plain(buffer.getvalue())  # no banner, only the live status line
    assert "anthropic:claude-test: pacing under the rate limit — sending in 12s" in plain(
        lines.getvalue()
    )


def test_without_a_terminal_a_run_of_retries_is_one_line_and_verbose_shows_each() -> None:
    def shown(verbose: bool) -> list[str]:
        out, _ = terminal(width=120)
        err, buffer = terminal(width=120)
        ui = ConsoleUI(out, err, clock=lambda: 0.0, verbose=verbose)
        for attempt in (2, 3, 4, 2):  # the last one starts the next call's retries
            ui.on_event(retry_event(retry_at=3.0, attempt=attempt))
        ui.on_event(GaveUp(kind=ErrorKind.RATE_LIMIT, requests=4, waited=9, message="x"))
        return plain(buffer.getvalue()).splitlines()

    quiet = shown(verbose=False)
    assert len(quiet) == 2
    assert all("attempt 2/8" in line for line in quiet)
    assert len(shown(verbose=True)) == 5  # every retry, and the give-up


def test_small_models_switch_is_shown_only_when_verbose() -> None:
    moved = FallbackActivated(
        from_model="anthropic:claude-small",
        to_model="anthropic:claude-test",
        reason="not_found",
        purpose=RequestKind.WEB_FETCH,
    )

    def shown(verbose: bool) -> str:
        out, buffer = terminal(width=120)
        ConsoleUI(out, clock=lambda: 0.0, verbose=verbose).on_event(SideModelSwitch(switch=moved))
        return plain(buffer.getvalue())

    assert shown(verbose=False) == ""  # the session's model did not move: /stats counts it
    assert (
        "small_model (web_fetch): Switched from anthropic:claude-small to anthropic:claude-test"
        in shown(verbose=True)
    )


def test_no_color_keeps_the_layout_without_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.on_tool_result(
        ToolUseBlock(id="t1", name="list_files", input={"pattern": "*.py"}),
        ToolResultBlock(tool_use_id="t1", content="a.py"),
    )

    assert not re.search(r"\x1b\[[0-9;]*3[0-7]m", buffer.getvalue())
    assert "✓ list_files(pattern=*.py) — 1 entry: a.py" in plain(buffer.getvalue())


def test_a_restarted_stream_discards_the_partial_tail() -> None:
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.begin_turn()
    ui.on_delta(TextDelta(text="half an ans"))
    ui.on_delta(StreamReset(reason="connection reset"))
    ui.on_delta(TextDelta(text="A whole answer."))
    ui.finish()

    shown = plain(buffer.getvalue())
    assert "connection reset" in shown
    assert "A whole answer." in shown
    assert "half an ans" not in shown.split("connection reset")[-1]


def test_a_restarted_stream_after_printed_lines_says_they_are_discarded() -> None:
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.begin_turn()
    ui.on_delta(TextDelta(text="A first line.\nand a sec"))
    ui.refresh()
    ui.on_delta(StreamReset(reason="connection reset"))
    ui.on_delta(TextDelta(text="The answer."))
    ui.finish()

    shown = plain(buffer.getvalue())
    assert "A first line." in shown  # printed: it cannot be taken back
    assert "connection reset — the partial answer above is discarded" in shown
    assert "and a sec" not in shown


def test_the_live_area_holds_the_line_being_written_and_the_status_line() -> None:
    screen = pyte.Screen(80, 24)
    stream = pyte.Stream(screen)
    console, buffer = terminal(height=24)
    ui = ConsoleUI(console, clock=lambda: 0.0)
    ui.begin_turn()
    ui.on_delta(TextDelta(text="".join(f"Line {n} of the answer.\n" for n in range(12))))
    ui.on_delta(TextDelta(text="The last one is still be"))
    ui.refresh()
    stream.feed(buffer.getvalue().replace("\n", "\r\n"))

    rows = [line.rstrip() for line in screen.display]
    assert rows[:12] == [f"Line {n} of the answer." for n in range(12)]
    assert rows[12:14] == ["The last one is still", ""]
    assert rows[14].endswith("writing · 0s · Ctrl-C to interrupt")
    assert rows[15:] == [""] * 9
    ui.finish()


def test_text_before_a_tool_call_is_printed_whole_when_the_call_starts() -> None:
    console, buffer = terminal()
    ui = ConsoleUI(console)
    ui.begin_turn()
    ui.on_delta(TextDelta(text="Let me read the file."))
    ui.on_delta(ToolUseDelta(index=1, id="t1", name="read_file"))

    assert "Let me read the file." in plain(buffer.getvalue())
    ui.finish()


def test_plain_text_keeps_emoji_codes_as_written() -> None:
    buffer = io.StringIO()
    ui = ConsoleUI(Console(file=buffer, width=80, force_terminal=False))
    ui.begin_turn()
    ui.on_delta(TextDelta(text="Press :m: then :smile: to go on."))
    ui.finish()

    assert buffer.getvalue() == "Press :m: then :smile: to go on.\n"


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["read_file", "run_command", "edit_file", "search"]),
    value=st.text(max_size=120),
    content=st.text(max_size=300),
    is_error=st.booleans(),
    width=st.integers(min_value=12, max_value=140),
)
def test_the_plain_tool_line_is_the_styled_one_without_styles(
    name: str, value: str, content: str, is_error: bool, width: int
) -> None:
    # Output that is not a terminal gets the plain line, built without rich: the same text,
    # cut the same way (wide characters count two cells).
    call = ToolUseBlock(id="t1", name=name, input={"path": value, "limit": 5})
    result = ToolResultBlock(tool_use_id="t1", content=content, is_error=is_error)
    assert plain_tool_line(call, result, width) == tool_line(call, result, width).plain
    assert plain_tool_line(call, result, 20) == tool_line(call, result, 20).plain


def test_a_pipe_gets_the_tool_line_as_plain_text() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=30)
    ui = ConsoleUI(console, console)
    call = ToolUseBlock(id="t1", name="read_file", input={"path": "漢字漢字漢字漢字漢字漢字.py"})
    result = ToolResultBlock(tool_use_id="t1", content="     1\tx = 1")
    ui.on_tool_result(call, result)
    assert buffer.getvalue() == tool_line(call, result, 30).plain + "\n"
    assert "\x1b" not in buffer.getvalue()
