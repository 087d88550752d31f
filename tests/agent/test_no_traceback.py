"""No command a person can type shows a Python traceback: every slash command the REPL's
/help lists (and -p's answer to each), and every subcommand (and its --help), run with
harmless arguments and bad ones, in a decoy HOME against the fake model server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pexpect
import pytest
import typer

from agent.cli import cli
from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, Terminal, clean

EXTRA_LINES = {
    "/resume": ["/resume", "/resume nosuchid"],
    "/model": ["/model", "/model nonsense", "/model openai:gpt-test"],
    "/compact": ["/compact", "/compact the parser"],
    "/plan": ["/plan", "/plan"],  # on, then off again
    "/undo": ["/undo", "/undo"],
    "/agents": ["/agents", "/agents allow nobody", "/agents bogus"],
    "/exit": [],  # last, below
}
"""Lines to type for a command beyond the bare one: its arguments, good and bad."""

SUBCOMMAND_ARGS = {
    "sessions": [[], ["--all"], ["--limit", "0"]],
    "trust": [["--yes"]],
    "mcp approve": [[], ["nosuchserver"]],
    "doctor": [[], ["--bogus"]],
}
"""Arguments for a subcommand beyond none at all."""

pytestmark = pytest.mark.timeout(900)  # dozens of REPL lines and agent processes, each real


def _slash_commands(term: Terminal) -> list[str]:
    shown = clean(term.command("/help"))
    return [line.split()[0] for line in shown.splitlines() if line.startswith("/")]


def _type(term: Terminal, line: str) -> str:
    """Type ``line`` and wait for the prompt; a question it asks is answered with Enter."""
    term.send_line(line)
    for _ in range(3):
        try:
            return term.prompt(timeout=15)
        except pexpect.TIMEOUT:
            term.send_line("")
    return term.prompt(timeout=15)


def test_no_slash_command_shows_a_traceback(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("Done."))
    (workspace / "app.py").write_text("print('hi')\n")
    canary = decoy_home / "canary.txt"
    canary.write_text("keep")
    term = spawn(env={"EDITOR": "true", "VISUAL": "true"})
    term.prompt()
    _type(term, "say hi")  # a session with a turn in it, for /undo, /compact, /cost
    names = _slash_commands(term)
    assert {"/help", "/doctor", "/undo", "/permissions", "/exit"} <= set(names)
    for name in names:
        for line in EXTRA_LINES.get(name, [name]):
            _type(term, line)
    term.send_line("/exit")
    term.ended()

    assert "Traceback" not in term.raw
    assert "internal error" not in term.raw
    assert canary.read_text() == "keep"

    for name in names:
        run = run_agent("-p", name, server=fake_llm, workspace=workspace, home=decoy_home)
        assert "Traceback" not in run.stdout + run.stderr, name


def _subcommands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Each command below the click ``group`` (typer's), as the words that run it."""
    found = []
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if hasattr(command, "commands"):  # a group of its own (agent mcp ...)
            found += _subcommands(command, path)
        else:
            found.append(path)
    return found


def test_no_subcommand_shows_a_traceback(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.respond_with(lambda request: Reply.text("ok"))
    canary = decoy_home / "canary.txt"
    canary.write_text("keep")
    commands = _subcommands(typer.main.get_command(cli))
    assert ("doctor",) in commands
    assert ("mcp", "list") in commands
    runs = [["--help"], ["--version"], ["--bogus-flag"]]
    for path in commands:
        runs.append([*path, "--help"])
        runs += [[*path, *args] for args in [[], *SUBCOMMAND_ARGS.get(" ".join(path), [])]]
    for args in runs:
        run = run_agent(*args, server=fake_llm, workspace=workspace, home=decoy_home, timeout=90)
        shown = run.stdout + run.stderr
        assert "Traceback" not in shown, args
        assert "internal error" not in shown, args
    assert canary.read_text() == "keep"
