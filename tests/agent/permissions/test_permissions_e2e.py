"""Permission rules end to end: the real ``agent`` (``-p`` and the REPL), the fake LLM server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import MODELS, AgentRun, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

MODEL = MODELS["anthropic"]


def _tool_result(fake_llm: FakeLlmServer) -> str:
    return str(fake_llm.requests[-1].body)


def test_a_deny_rule_holds_under_yes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("permissions:\n  deny: ['Bash(touch:*)']\n")
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text("Could not."),
    )

    run = run_agent(
        "-p",
        "make it",
        "--yes",
        "--model",
        MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert not (workspace / "made").exists()
    assert "permission rule deny: Bash(touch:*)" in _tool_result(fake_llm)


def test_disallowed_tools_refuse_and_allowed_tools_run_without_asking(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch allowed"}),
        Reply.tool_call("run_command", {"command": "touch other"}),
        Reply.tool_call("read_file", {"path": "agent.yaml"}),
        Reply.text("Done."),
    )
    (workspace / "agent.yaml").write_text("model: " + MODEL + "\n")

    # No --yes: without a rule, a command needs approval nobody can give under -p.
    run = run_agent(
        "-p",
        "go",
        "--allowedTools",
        "Bash(touch allowed)",
        "--disallowedTools",
        "Read",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert (workspace / "allowed").exists()
    assert not (workspace / "other").exists()
    bodies = [str(request.body) for request in fake_llm.requests]
    assert "needs the person's approval" in bodies[2]
    assert "permission rule deny: Read" in bodies[3]


def _touch_then_read_env(fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path) -> AgentRun:
    """``-p go`` where the model runs ``touch made`` then reads .env."""
    (workspace / ".env").write_text("KEY=1\n")
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.tool_call("read_file", {"path": ".env"}),
        Reply.text("ok"),
    )
    return run_agent(
        "-p", "go", "--model", MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )


def test_an_untrusted_project_cannot_allow_its_own_commands(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text(
        "permissions:\n  allow: ['Bash(touch:*)']\n  deny: ['Read(./.env)']\n"
    )
    run = _touch_then_read_env(fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    assert not (workspace / "made").exists()  # the allow rule waits for `agent trust`
    assert "permission allow: Bash(touch:*)" in run.stderr
    assert "permission rule deny: Read(./.env)" in _tool_result(fake_llm)  # deny applies


def test_always_allowing_a_prefix_saves_a_rule_for_this_project(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch one"}),
        Reply.text("First done."),
        Reply.tool_call("run_command", {"command": "touch two"}),
        Reply.text("Second done."),
    )
    term = spawn()
    term.prompt()
    term.send_line("make one")
    shown = clean(term.expect("in this project:"))
    assert "[p] always `touch …`" in shown
    term.send_line("p")
    assert "saved: permissions allow run_command(touch *)" in clean(term.expect("First done"))
    term.prompt()
    term.send_line("make two")  # no question this time
    assert "Allow?" not in clean(term.expect("Second done"))
    term.prompt()
    term.exit()

    assert (workspace / "one").exists()
    assert (workspace / "two").exists()
    saved = list((decoy_home / ".agent" / "permissions").glob("*.json"))
    assert json.loads(saved[0].read_text())["allow"] == ["run_command(touch *)"]


def test_claude_code_settings_files_hold_in_print_mode_allow_waiting_for_trust(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch:*)"], "deny": ["Read(./.env)"]}})
    )
    (decoy_home / ".claude").mkdir()
    (decoy_home / ".claude" / "settings.json").write_text('{"permissions": {"allow": [')
    run = _touch_then_read_env(fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    assert not (workspace / "made").exists()  # the project's allow rule waits for trust
    assert "permission allow: Bash(touch:*), from .claude/settings.json" in run.stderr
    assert "~/.claude/settings.json: not valid JSON" in run.stderr
    assert "permission rule deny: Read(./.env) (from .claude/settings.json)" in _tool_result(
        fake_llm
    )


def test_the_repl_asks_to_trust_a_claude_settings_file_and_lists_where_rules_come_from(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch:*)"], "ask": ["ToolSearch"]}})
    )
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text("Made it."),
    )
    term = spawn()
    asked = clean(term.expect("Allow this for this directory"))
    term.send_line("y")
    term.prompt()
    listed = term.command("/permissions")
    term.send_line("make it")  # allowed by the rule: no question
    answered = clean(term.expect("Made it"))
    term.prompt()
    term.exit()

    assert "permission allow: Bash(touch:*), from .claude/settings.local.json" in asked
    assert "Bash(touch:*)" in listed
    assert ".claude/settings.local.json" in listed
    assert "ignored: no ToolSearch tool here" in listed
    assert "Allow?" not in answered
    assert (workspace / "made").exists()


def test_permissions_lists_a_projects_allow_rule_left_untrusted_as_not_in_force(
    spawn: Spawn, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}})
    )
    term = spawn()
    term.expect("Allow this for this directory")
    term.send_line("n")
    term.prompt()
    listed = term.command("/permissions")
    term.exit()

    assert "Not in force: allow Bash(touch:*) (.claude/settings.json)" in listed
    assert "agent trust" in listed


def test_permissions_lists_every_approval_in_force_and_takes_each_back(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "one.txt", "content": "1"}),
        Reply.text("One written."),
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text("Made."),
        Reply.tool_call("write_file", {"path": "two.txt", "content": "2"}),
        Reply.text("Two written."),
    )
    term = spawn()
    term.prompt()
    term.send_line("write one")
    term.expect("for this tool:")
    term.send_line("a")  # always for this tool: write_file, for this session
    granted = clean(term.expect("One written"))
    term.prompt()
    term.send_line("make it")
    term.expect("in this project:")
    term.send_line("p")  # always `touch …` in this project: saved
    term.expect("Made.")
    term.prompt()
    listed = " ".join(term.command("/permissions").split())
    from_file = term.command("/permissions remove 9")
    removed = " ".join(
        (term.command("/permissions remove 1") + term.command("/permissions remove 1")).split()
    )
    after = " ".join(term.command("/permissions").split())
    term.send_line("write two")  # asked again: the session's answer was taken back
    term.expect("for this tool:")
    term.send_line("n")
    term.expect("Two written")
    term.prompt()
    term.exit()

    assert "allowed for this session: write_file (/permissions lists it)" in granted
    assert "1 allow write_file this session: [a]lways for this tool, at the approval prompt" in (
        listed
    )
    assert "2 allow run_command(touch *) always allowed at the approval prompt" in listed
    assert "/permissions remove N takes back a rule given at the approval prompt" in listed
    assert "No rule 9: /permissions lists 2." in from_file
    assert "Removed allow write_file." in removed
    assert "Removed allow run_command(touch *) (and from this project's saved rules)." in removed
    assert "No permission rules" in after
    assert (workspace / "one.txt").exists()
    assert (workspace / "made").exists()
    assert not (workspace / "two.txt").exists()
    saved = list((decoy_home / ".agent" / "permissions").glob("*.json"))
    assert json.loads(saved[0].read_text())["allow"] == []
