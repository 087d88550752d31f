"""After every REPL turn, one line says what the tools changed, whatever the answer claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.terminal.turn_changes import TurnChanges
from providers import ToolResultBlock, ToolUseBlock
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean
from tools import CheckpointRecorded, CommandChangedFiles, RolledBack, ToolRefused, ToolStarted


def _checkpoint(path: str) -> CheckpointRecorded:
    return CheckpointRecorded(path=path, existed_before=True, turn=1, tool_use_id="t")


def _call(name: str) -> ToolUseBlock:
    return ToolUseBlock(id="t", name=name, input={})


def test_the_words_count_files_and_commands() -> None:
    changes = TurnChanges(Path("/w"))
    assert changes.summary() == "no files changed"
    changes.on_event(ToolStarted(tool="run_command", tool_use_id="t", kind="command"))
    changes.on_tool_result(_call("run_command"), ToolResultBlock(tool_use_id="t", content="ok"))
    assert changes.summary() == "no files changed, 1 command run"
    changes.on_event(_checkpoint("/w/a.py"))
    changes.on_event(CommandChangedFiles(tool_use_id="t", paths=["a.py", "b.py"]))
    changes.on_tool_result(_call("read_file"), ToolResultBlock(tool_use_id="t", content="x"))
    assert changes.summary() == "2 files changed, 1 command run"
    changes.on_event(RolledBack(tool="edit_file", tool_use_id="t", restored=["/w/b.py"], failed=[]))
    assert changes.summary() == "1 file changed, 1 command run"
    changes.begin()
    assert changes.summary() == "no files changed"


def test_a_refused_command_is_counted_as_refused_not_as_run() -> None:
    changes = TurnChanges(Path("/w"))
    refused = ToolRefused(tool="run_command", tool_use_id="t", reason="no", by="approval")
    changes.on_event(refused)
    changes.on_tool_result(_call("run_command"), ToolResultBlock(tool_use_id="t", content="x"))
    assert changes.summary() == "no files changed, 1 call refused"
    changes.on_event(ToolStarted(tool="run_command", tool_use_id="u", kind="command"))
    changes.on_event(refused)
    assert changes.summary() == "no files changed, 1 command run, 2 calls refused"


@pytest.mark.parametrize(
    ("how", "args", "answer"),
    [
        ("the person says n", ("--approval", "ask"), "n"),
        ("plan mode", ("--yes",), "/plan"),
        ("the safety policy", ("--yes",), None),
    ],
)
def test_a_refused_command_is_not_said_to_have_run(
    spawn: Spawn,
    fake_llm: FakeLlmServer,
    workspace: Path,
    how: str,
    args: tuple[str, ...],
    answer: str | None,
) -> None:
    command = "rm -rf ~" if how == "the safety policy" else "touch made.txt"
    (workspace / "canary.txt").write_text("keep")
    fake_llm.script(Reply.tool_call("run_command", {"command": command}), Reply.text("Done."))
    term = spawn(*args)
    term.prompt()
    if answer == "/plan":
        term.command("/plan")
    term.send_line("do it")
    if answer == "n":
        term.expect("Allow\\?")
        term.send_line(answer)
    shown = clean(term.expect("no files changed[^\r\n\x1b]*"))
    if answer == "/plan":
        term.expect("Approve the plan")
        term.send_line("n")
    term.prompt()
    term.exit()

    assert "command run" not in shown, how
    assert "1 call refused" in shown, how
    assert not (workspace / "made.txt").exists()
    assert (workspace / "canary.txt").read_text() == "keep"


def test_a_turn_that_ran_a_command_says_what_it_changed(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "echo a > a.txt && echo b > b.txt"}),
        Reply.text("Made them."),
        Reply.text("I created hello.py for you."),  # a claim no tool backs
    )
    term = spawn("--yes")
    term.prompt()
    term.send_line("make two files")
    shown = clean(term.expect("2 files changed, 1 command run"))
    term.prompt()
    assert "Made them." in shown
    assert (workspace / "a.txt").exists()

    term.send_line("make hello.py")
    shown = clean(term.expect("no files changed"))
    term.prompt()
    assert "I created hello.py" in shown
    assert not (workspace / "hello.py").exists()
    term.exit()
