"""The plan in a real terminal: above the status line while the model works, above the prompt
after it, whole on /todos, and back again when the session is resumed."""

from __future__ import annotations

import json

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

PLAN = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
}


def test_the_plan_is_shown_while_working_above_the_prompt_on_todos_and_after_resume(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    fake_llm.script(
        Reply.tool_call("todo_write", PLAN),
        # Written slowly, so the live area is drawn with the plan in it meanwhile.
        Reply.text("I am on the bug now.", delta_chars=2, delta_pause=0.15),
    )
    terminal = spawn()
    terminal.prompt()
    terminal.send_line("fix the bug")
    during = clean(terminal.expect(r"☐ Run the tests\s+\S+ (thinking|writing)"))
    assert "☒ Read the code" in during
    assert "▸ Fixing the bug" in during
    terminal.prompt()
    shown = "\n".join(terminal.lines())
    assert "I am on the bug now." in shown
    assert "✓ todo_write(todos=[3 items]) — plan updated" in shown
    assert "plan: 1/3 done" not in shown  # no banner: the list shows it
    above = clean(terminal.expect("☐ Run the tests"))  # drawn with the prompt, above it
    assert "▸ Fixing the bug" in above

    listed = clean(terminal.command("/todos"))
    assert "Plan · 1/3 done" in listed
    assert "☒ Read the code" in listed
    assert "▸ Fixing the bug" in listed
    session = terminal.exit_for_resume()

    resumed = spawn("--resume", session)
    resumed.prompt()
    assert "▸ Fixing the bug" in clean(resumed.expect("☐ Run the tests"))
    assert "Plan · 1/3 done" in clean(resumed.command("/todos"))
    resumed.exit()


def test_a_second_item_in_progress_is_refused_and_the_model_is_told(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    busy = {"content": "B", "status": "in_progress", "activeForm": "Doing B"}
    fake_llm.script(
        Reply.tool_call("todo_write", {"todos": [PLAN["todos"][1], busy]}),
        Reply.text("Noted."),
    )
    terminal = spawn()
    terminal.prompt()
    shown = clean(terminal.command("plan it"))
    assert "at most one item may be in_progress" in " ".join(shown.split())
    assert "No plan yet" in clean(terminal.command("/todos"))
    terminal.exit()
    told = fake_llm.requests[-1].body["messages"][-1]
    assert "at most one item may be in_progress" in str(told)


def test_after_a_compaction_the_model_is_told_its_plan_again(
    spawn: Spawn, fake_llm: FakeLlmServer
) -> None:
    # Answers longer than the summary: a summary that would grow the context is discarded.
    fake_llm.script(
        Reply.tool_call("todo_write", PLAN),
        Reply.text("Working. " + "The bug is in the parser, line by line. " * 20),
        Reply.text("Still working. " + "The tests need a fixture too. " * 20),
        Reply.text("SUMMARY: fixing the parser bug"),
        Reply.text("Done."),
    )
    terminal = spawn()
    terminal.prompt()
    terminal.command("fix the bug")
    terminal.command("go on")
    assert "Compacted" in clean(terminal.command("/compact"))
    terminal.command("and now?")
    sent = json.dumps(fake_llm.requests[-1].body["messages"])
    assert "SUMMARY: fixing the parser bug" in sent
    assert "Your todo list, kept through the compaction" in sent
    assert "Fixing the bug" in sent
    assert "Plan · 1/3 done" in clean(terminal.command("/todos"))
    terminal.command("/clear")  # a new session starts without a plan
    assert "No plan yet" in clean(terminal.command("/todos"))
    terminal.exit()
