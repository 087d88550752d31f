"""What the REPL shows on resume: the person's last exchange, honest and short."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from agent.engine.turn import CONTINUE_PROMPT
from agent.terminal.mentions import expand_now
from agent.terminal.repl_view import (
    ANSWER_LINES,
    TOOL_LINES,
    last_exchange,
    stats_table,
    typed_by_person,
)
from compaction.summary import summary_note
from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from recovery import RecoveryStats
from recovery.fleet import FleetView


def render(messages: list[Message]) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=100, force_terminal=False)
    console.print(last_exchange(messages, 100))
    return buffer.getvalue()


def listing_turn(calls: int) -> list[Message]:
    """A prompt, ``calls`` list_files calls with their results, and a long answer."""
    messages = [Message.user("list the files here")]
    for number in range(calls):
        call = ToolUseBlock(id=f"t{number}", name="list_files", input={"path": f"dir{number}"})
        result = ToolResultBlock(tool_use_id=call.id, content="a.py\nb.py")
        messages += [
            Message(role="assistant", content=[TextBlock(text=f"thinking {number}"), call]),
            Message(role="user", content=[result]),
        ]
    answer = "\n".join(f"answer line {n}" for n in range(40))
    return [*messages, Message.assistant(answer)]


def test_a_long_turn_is_shown_in_a_bounded_number_of_lines() -> None:
    shown = render(listing_turn(50))

    assert "› list the files here" in shown
    assert f"… {50 - TOOL_LINES} earlier tool calls" in shown
    assert shown.count("list_files(") == TOOL_LINES
    assert "dir49" in shown
    assert "dir0)" not in shown
    assert "thinking" not in shown  # only the final answer is shown
    assert f"answer line {ANSWER_LINES - 1}" in shown
    assert f"answer line {ANSWER_LINES}" not in shown
    assert len(shown.splitlines()) < 30


def test_notes_the_agent_wrote_are_not_taken_for_the_persons_prompt() -> None:
    summary = Message.user(summary_note("## Goals\nfix the test"))
    assert not typed_by_person(summary)
    assert not typed_by_person(Message.user(CONTINUE_PROMPT))
    assert typed_by_person(Message.user("fix the test"))
    assert not typed_by_person(
        Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="x")])
    )
    shown = render([Message.user("fix the test"), Message.user(CONTINUE_PROMPT)])
    assert "› fix the test" in shown
    assert "cut off" not in shown


def test_a_long_prompt_is_cut_to_a_few_lines() -> None:
    prompt = "\n".join(f"line {n}" for n in range(30))
    shown = render([Message.user(prompt), Message.assistant("ok")])
    assert "line 3" in shown
    assert "line 4" not in shown
    assert "26 more lines" in shown


def test_stats_show_fingerprints_and_names_as_written_not_as_markup() -> None:
    view = FleetView(
        model="anthropic:claude-[test]",
        account="abcdef1234567890",  # "[abcdef12]" would be a style tag to rich
        wait=0,
        breaker_open=0,
        requests=None,
        tokens=None,
        in_flight=0,
        budget=None,
    )
    stats = RecoveryStats(
        current="anthropic:claude-[test]", requests=1, retries=0, fallbacks=0, escalations=0,
        stream_restarts=0, budget_exhausted=0, circuits_opened=0, gave_up=0, waited=0.0,
        budget_tokens=200.0, open_circuits=(), fleet_backend="file", fleet=(view,),
    )  # fmt: skip
    buffer = io.StringIO()
    Console(file=buffer, width=120, force_terminal=False).print(stats_table(stats, []))

    shown = buffer.getvalue()
    assert "anthropic:claude-[test] [abcdef12]" in shown


def test_cost_shows_money_per_model_and_the_fallbacks_share() -> None:
    from agent.terminal.repl_view import cost_table

    by_model = {
        "claude-sonnet-4-5-20250929": Usage(input_tokens=1_000_000, output_tokens=100_000),
        "gpt-4.1-mini": Usage(input_tokens=1_000_000),
        "mylab-model": Usage(input_tokens=10),
    }
    out = io.StringIO()
    Console(file=out, width=120).print(
        cost_table(Usage(), Usage(), by_model, "anthropic:claude-sonnet-4-5")
    )
    text = out.getvalue()
    assert "$4.5000" in text  # 3 USD input + 1.5 USD output at Sonnet 4.5's list price
    assert "$0.4000" in text  # gpt-4.1-mini input
    assert "?" in text  # a model with no known price, and so the session total
    assert "On fallback models: 48% of the tokens." in text  # no money: one price unknown


def test_the_last_prompt_is_shown_as_typed_without_the_files_it_attached(
    tmp_path: Path,
) -> None:
    (tmp_path / "README.md").write_text("# Readme\nsecret plans\n")
    (tmp_path / "src").mkdir()
    expanded = expand_now("summarize @README.md and @src/", tmp_path)
    assert '<file path="README.md">' in expanded.prompt  # the model got the file

    shown = render([Message.user(expanded.prompt), Message.assistant("A readme.")])

    assert "› summarize @README.md and @src/" in shown
    assert "<file" not in shown
    assert "secret plans" not in shown
    assert "more lines" not in shown
    assert "A readme." in shown
