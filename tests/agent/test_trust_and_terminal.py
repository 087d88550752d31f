"""``agent trust`` shows what it grants and asks; ``agent`` without a terminal says so on
stderr."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fakes.cli import agent_command, agent_env
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

ASKS = """\
approval: full-auto
sandbox: off
hooks:
  Stop:
    - hooks: [{type: command, command: 'true'}]
"""


def test_agent_trust_shows_everything_it_grants_then_asks(spawn: Spawn, workspace: Path) -> None:
    (workspace / "agent.yaml").write_text(ASKS)

    refused = spawn("trust", model=None)
    shown = " ".join(clean(refused.expect(r"Allow this\? \[y/N\]")).split())
    for granted in ("approval: full-auto", "sandbox.mode: off", "hooks for Stop"):
        assert granted in shown
    refused.send_line("n")
    refused.expect("Not allowed; nothing changed.")
    refused.ended()

    allowed = spawn("trust", model=None)
    allowed.expect(r"Allow this\? \[y/N\]")
    allowed.send_line("y")
    allowed.expect("Allowed for")
    allowed.ended()

    again = spawn("trust", model=None)
    again.expect(r"Nothing in ./agent.yaml or .claude/settings\*.json waits for approval here")


def _without_a_terminal(
    fake_llm: FakeLlmServer, workspace: Path, home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*agent_command(), *args],
        cwd=workspace,
        env=agent_env(fake_llm, home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_a_terminal_the_repl_says_so_on_stderr(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    proc = _without_a_terminal(fake_llm, workspace, decoy_home)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "stdin is not a terminal; use -p PROMPT" in proc.stderr


def test_resuming_without_a_terminal_says_how_to_go_on(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    proc = _without_a_terminal(fake_llm, workspace, decoy_home, "--resume", "abc123")
    assert proc.returncode == 2
    assert "add -p PROMPT to go on without one" in proc.stderr
