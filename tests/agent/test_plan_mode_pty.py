"""Plan mode in the real REPL: read-only until the person approves the plan."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Screen, Spawn, clean

EDIT = {"path": "app.py", "old_string": "old", "new_string": "new"}


def _app_the_model_plans_to_edit(workspace: Path, fake_llm: FakeLlmServer, *then: Reply) -> None:
    """app.py, and a model that tries the edit, is refused, then answers with a plan."""
    (workspace / "app.py").write_text("x = 'old'\n")
    fake_llm.script(
        Reply.tool_call("edit_file", EDIT), Reply.text("Plan: 1. change old to new."), *then
    )


def test_plan_mode_refuses_edits_until_the_plan_is_approved(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    _app_the_model_plans_to_edit(
        workspace, fake_llm, Reply.tool_call("edit_file", EDIT), Reply.text("Done: changed it.")
    )
    term = spawn("--yes")  # plan mode holds even where nothing is asked
    term.prompt()
    assert "Plan mode on" in term.command("/plan")
    term.send_line("rename old")
    shown = clean(term.expect("Approve the plan"))
    assert (workspace / "app.py").read_text() == "x = 'old'\n"
    term.send_line("y")
    term.expect("Done: changed it")
    term.prompt()
    term.exit()

    assert "Plan: 1. change old to new." in shown
    assert "plan mode: edit_file changes files" in str(fake_llm.requests[1].body)
    assert "Plan mode is on" in str(fake_llm.requests[0].body)
    assert "The plan is approved" in str(fake_llm.requests[2].body)
    assert (workspace / "app.py").read_text() == "x = 'new'\n"


def test_plan_with_a_request_turns_plan_mode_on_and_plans_it_then_asks(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    _app_the_model_plans_to_edit(workspace, fake_llm)
    term = spawn("--yes")
    term.prompt()
    term.send_line("/plan rename old in app.py")
    shown = clean(term.expect("Approve the plan"))
    term.send_line("n")
    term.prompt()
    term.exit()

    assert "Plan mode on" in shown
    assert "Plan: 1. change old to new." in shown
    first = str(fake_llm.requests[0].body)
    assert "Plan mode is on" in first
    assert "rename old in app.py" in first
    assert "plan mode: edit_file changes files" in str(fake_llm.requests[1].body)
    assert (workspace / "app.py").read_text() == "x = 'old'\n"


def test_shift_tab_cycles_modes_as_claude_code_and_the_line_under_the_prompt_shows_it(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 'old'\n")
    fake_llm.script(Reply.tool_call("edit_file", EDIT), Reply.text("Edited."))
    term = spawn(env={"PROMPT_TOOLKIT_NO_CPR": ""})  # the toolbar shows where rows are known
    Screen(term, answer_cursor_queries=True)
    term.prompt()
    term.child.send("\x1b[Z")  # Shift-Tab
    term.expect("accept edits on")
    term.send_line("rename old")  # the edit runs without a question
    shown = term.expect("Edited") + term.prompt()
    term.child.send("\x1b[Z")
    term.expect("plan ›")
    term.expect("plan mode on")
    term.child.send("\x1b[Z")  # default again: not bypass, which the session did not start in
    term.send_line("/plan")
    assert "Plan mode on" in term.prompt()
    term.exit()

    assert "Allow?" not in shown
    assert (workspace / "app.py").read_text() == "x = 'new'\n"


def test_a_read_only_program_that_writes_fails_in_the_read_only_sandbox(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "git diff --output=out.txt"}),
        Reply.text("Plan: nothing to do."),
    )
    term = spawn("--yes")
    term.prompt()
    term.command("/plan")
    term.send_line("look")
    term.expect("Approve the plan")
    term.send_line("n")
    term.prompt()
    term.exit()

    assert not (workspace / "out.txt").exists()


def test_the_mode_chosen_with_shift_tab_outlives_clear(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 'old'\n")
    fake_llm.script(Reply.tool_call("edit_file", EDIT), Reply.text("Edited."))
    term = spawn()
    term.prompt()
    term.child.send("\x1b[Z")  # accept edits
    term.command("/clear")
    term.send_line("rename old")
    shown = term.expect("Edited") + term.prompt()
    term.exit()

    assert "Allow?" not in shown
    assert (workspace / "app.py").read_text() == "x = 'new'\n"
