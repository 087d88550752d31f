"""``!command`` lines and shell mode in the real REPL, in a pseudo-terminal."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Screen, Spawn, clean


def test_a_bang_line_runs_without_a_request_and_its_output_goes_with_the_next_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    fake_llm.script(Reply.text("Seen it."))
    term = spawn()
    term.prompt()

    shown = term.command("!echo hi-there && touch made")

    assert "hi-there" in shown
    assert "Allow?" not in shown  # the person typed it: no approval question
    assert (workspace / "made").exists()
    assert fake_llm.requests == []
    term.send_line("what did it print?")
    term.expect("Seen it")
    term.prompt()
    term.exit()
    body = str(fake_llm.requests[0].body)
    assert "<bash-input>echo hi-there && touch made</bash-input>" in body
    assert "hi-there" in body.split("<bash-stdout>")[1]


def test_deny_rules_and_the_safety_policy_hold_for_bang_lines(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / "agent.yaml").write_text("permissions:\n  deny: ['Bash(touch:*)']\n")
    term = spawn()
    term.prompt()

    denied = term.command("!touch made")
    refused = term.command("!rm -rf ~")
    term.exit()

    assert "permission rule deny: Bash(touch:*)" in denied
    assert not (workspace / "made").exists()
    assert "Refused: " in refused
    assert "refused: refused" not in refused.lower()
    assert fake_llm.requests == []


def test_a_bare_bang_switches_shell_mode_on_and_off(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    term = spawn()
    term.prompt()

    assert "Shell mode on" in term.command("!")
    assert "in-shell-mode" in term.command("echo in-shell-mode")
    assert "/help" not in term.command("ls")  # lines are commands, not prompts
    assert "Shell mode off" in term.command("!")
    term.exit()

    assert fake_llm.requests == []


TOKEN = "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUa"
"""A deploy token in the environment: redacted wherever it would be shown or saved."""


def test_a_bang_run_is_saved_at_once_survives_resume_and_goes_with_the_next_prompt(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "token.txt").write_text(f"token={TOKEN}\n")
    fake_llm.script(Reply.text("Seen both."))
    env = {"DEPLOY_TOKEN": TOKEN}
    term = spawn(env=env)
    term.prompt()
    term.command("!echo first-run")
    shown = term.command("!cat token.txt")
    left = clean(term.exit())  # no prompt sent: the runs are in the session already
    session_id = re.findall(r"agent --resume (\w+)", left)[-1]

    again = spawn("--resume", session_id, env=env)
    screen = Screen(again)  # the answer's words may reach the terminal in separate writes
    greeting = clean(again.prompt())
    again.send_line("what did they print?")
    again.prompt()
    again.exit()

    assert any(line.startswith("Seen both.") for line in screen.lines)

    assert TOKEN not in shown
    assert "stopped mid-turn" not in greeting  # runs alone wait for a prompt
    assert "› ! cat token.txt" in greeting
    assert len(fake_llm.requests) == 1
    body = str(fake_llm.requests[0].body)
    assert "<bash-input>echo first-run</bash-input>" in body
    assert "<bash-input>cat token.txt</bash-input>" in body
    assert body.index("<bash-input>echo first-run") < body.index("what did they print?")
    assert TOKEN not in body
    saved = b"".join(path.read_bytes() for path in (decoy_home / ".agent").rglob("*.jsonl"))
    assert b"<bash-input>cat token.txt</bash-input>" in saved
    assert TOKEN.encode() not in saved
