"""While a tool runs, the status line says so and counts its seconds; Ctrl-C of a running
tool leaves its ✗ line, saying it was interrupted."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import wait_for_descendant
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean


def test_a_running_command_is_shown_running_then_interrupted(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    fake_llm.script(Reply.tool_call("run_command", {"command": "sleep 300.31"}))
    term = spawn("--yes")
    term.prompt()
    term.send_line("wait a while")
    term.expect(r"running run_command [1-9]s")  # it counts, and says running, not preparing
    wait_for_descendant(term.child.pid, ["sleep", "300.31"])

    term.interrupt()
    shown = clean(term.expect("Interrupted"))
    term.prompt()
    term.exit()

    assert "✗ run_command(" in shown
    assert "interrupted after" in shown
    assert "preparing run_command" not in shown
