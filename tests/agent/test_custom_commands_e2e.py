"""Custom slash commands end to end: the REPL in a pseudo-terminal and ``agent -p "/name"``."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean


def _command(workspace: Path, name: str, text: str) -> None:
    path = workspace / ".agent" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_command_file_shows_in_help_and_sends_its_body(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    _command(workspace, "fix", "---\ndescription: Fix an issue\n---\nFix issue #$1 carefully.\n")
    fake_llm.script(Reply.text("Fixed it."))
    term = spawn()
    term.prompt()

    assert "Fix an issue (project)" in term.command("/help")
    term.send_line("/fix 42")
    term.expect("Fixed it")
    term.prompt()
    term.exit()

    assert "Fix issue #42 carefully." in str(fake_llm.requests[0].body)


def test_a_project_command_with_shell_lines_runs_them_only_once_allowed(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    _command(
        workspace,
        "status",
        "---\nallowed-tools: Bash(echo:*)\n---\nState: !`echo shell-said-hi`\n",
    )
    fake_llm.script(Reply.text("Noted."))
    term = spawn()
    term.prompt()
    term.send_line("/status")
    term.expect("Allow this command in this project")
    term.send_line("n")
    assert "/status not run" in clean(term.prompt())
    term.send_line("/status")
    term.expect("Allow this command in this project")
    term.send_line("y")
    term.expect("Noted")
    term.prompt()
    term.exit()

    assert len(fake_llm.requests) == 1
    assert "State: shell-said-hi" in str(fake_llm.requests[0].body)


def test_print_mode_runs_a_command_and_refuses_an_unallowed_project_shell_line(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _command(workspace, "explain", "Explain $ARGUMENTS simply.")
    _command(workspace, "leak", "!`echo secret`")
    fake_llm.script(Reply.text("Simply put."))
    model = ("--model", MODELS["anthropic"])

    run = run_agent(
        "-p", "/explain monads", *model, server=fake_llm, workspace=workspace, home=decoy_home
    )
    refused = run_agent(
        "-p", "/leak", "--yes", *model, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "Explain monads simply." in str(fake_llm.requests[0].body)
    assert refused.code == 2
    assert "need your approval first" in refused.stderr
    assert len(fake_llm.requests) == 1
