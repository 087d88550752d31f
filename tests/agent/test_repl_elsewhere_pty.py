"""Resuming, in the REPL, a session started in another directory says where it works now."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean


def test_a_session_from_another_directory_names_the_workspace_before_anything(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    fake_llm.script(Reply.text("First answer."))
    first = spawn()
    first.prompt()
    first.send_line("hello")
    first.expect("First answer")
    first.prompt()
    session = first.exit_for_resume()

    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    other = spawn("--resume", session, cwd=elsewhere)
    greeting = " ".join(clean(other.prompt()).split())
    said = f"This session was started in {workspace}; it works in {elsewhere} now"
    assert said in greeting
    assert greeting.index(said) < greeting.index("Last exchange")
    other.exit()

    again = spawn("--resume", session)  # back home: nothing to say
    assert "This session was started in" not in clean(again.prompt())
    again.exit()
