"""After every REPL turn, one line says what the tools changed, whatever the answer claims."""

from __future__ import annotations

from pathlib import Path

from agent.terminal.turn_changes import TurnChanges
from providers import ToolResultBlock, ToolUseBlock
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean
from tools import CheckpointRecorded, CommandChangedFiles, RolledBack


def _checkpoint(path: str) -> CheckpointRecorded:
    return CheckpointRecorded(path=path, existed_before=True, turn=1, tool_use_id="t")


def _call(name: str) -> ToolUseBlock:
    return ToolUseBlock(id="t", name=name, input={})


def test_the_words_count_files_and_commands() -> None:
    changes = TurnChanges(Path("/w"))
    assert changes.summary() == "no files changed"
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
