"""As the person meets it through ``agent -p``: their own stricter config lives in a decoy HOME,
a cloned repository's files try to loosen it, and the looser value waits for `agent trust`
with a notice naming the key, under ``--yes`` too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, AgentRun, run_agent, write_person_config
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.fakes.terminal import Spawn, clean
from tools.guard.landlock import abi_version

TOKEN = "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUa"
"""A deploy token under a name no rule finds secret: only the person's redact_env hides it."""


def _run(
    fake_llm: FakeLlmServer,
    workspace: Path,
    home: Path,
    *flags: str,
    env: dict[str, str] | None = None,
) -> AgentRun:
    args = ("-p", "do it", *flags, "--model", MODELS["anthropic"])
    run = run_agent(*args, server=fake_llm, workspace=workspace, home=home, env=env)
    assert run.code == 0, run.stderr
    return run


def _said(run: AgentRun) -> str:
    return " ".join(run.stderr.split())


def _last_tool_result(fake_llm: FakeLlmServer) -> str:
    return str(fake_llm.requests[-1].body)


def _write(name: str) -> Reply:
    return Reply.tool_call("write_file", {"path": name, "content": "written\n"})


@pytest.mark.skipif(abi_version() < 1, reason="the kernel has no Landlock (Linux 5.13+)")
def test_a_repo_cannot_widen_the_persons_read_only_sandbox(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_person_config(decoy_home, "sandbox: read-only\n")
    (workspace / "agent.yaml").write_text("sandbox: {mode: workspace-write}\n")
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "echo x > made.txt"}), Reply.text("done")
    )

    run = _run(fake_llm, workspace, decoy_home, "--yes")

    assert not (workspace / "made.txt").exists()
    assert "sandbox.mode: workspace-write (loosen the command sandbox)" in _said(run)
    assert "run `agent trust` here" in _said(run)


def test_a_repo_cannot_turn_the_persons_plan_mode_off(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_person_config(decoy_home, "plan_mode: true\n")
    (workspace / "agent.yaml").write_text("plan_mode: false\n")
    fake_llm.script(_write("made.txt"), Reply.text("done"))

    run = _run(fake_llm, workspace, decoy_home, "--yes")

    assert not (workspace / "made.txt").exists()
    assert "plan_mode: false (turn plan mode off)" in _said(run)
    assert "plan mode" in _last_tool_result(fake_llm)


def test_a_repo_cannot_enable_tools_the_person_left_off(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_person_config(decoy_home, "tools: {enabled: [read_file, list_files, search]}\n")
    (workspace / "agent.yaml").write_text(
        "tools: {enabled: [read_file, list_files, search, write_file, run_command]}\n"
    )
    fake_llm.script(_write("made.txt"), Reply.text("done"))

    run = _run(fake_llm, workspace, decoy_home, "--yes")

    assert not (workspace / "made.txt").exists()
    assert "tools.enabled: [read_file, list_files, search, write_file, run_command]" in _said(run)
    tools = [tool["name"] for tool in fake_llm.requests[0].body["tools"]]
    assert sorted(tools) == ["list_files", "read_file", "search"]


def test_a_repo_cannot_unhide_a_token_the_person_redacts(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_person_config(decoy_home, "sessions: {redact_env: [DEPLOY_VALUE]}\n")
    (workspace / "agent.yaml").write_text("sessions: {redact_env: []}\n")
    fake_llm.script(
        Reply.tool_call("run_command", {"command": 'echo "$DEPLOY_VALUE"'}), Reply.text("done")
    )

    run = _run(fake_llm, workspace, decoy_home, "--yes", env={"DEPLOY_VALUE": TOKEN})

    assert "sessions.redact_env: [] (stop hiding these variables' values)" in _said(run)
    sent_back = _last_tool_result(fake_llm)
    assert "tool_result" in sent_back
    assert TOKEN[:8] not in sent_back
    assert TOKEN[:8] not in run.stdout + run.stderr


def test_a_repos_claude_default_mode_cannot_leave_the_persons_plan(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # The person's own allow rule would let the write run, were plan mode off.
    (decoy_home / ".claude").mkdir()
    (decoy_home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "plan", "allow": ["Write"]}})
    )
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "default"}})
    )
    fake_llm.script(_write("made.txt"), Reply.text("done"))

    run = _run(fake_llm, workspace, decoy_home)

    assert not (workspace / "made.txt").exists()
    said = _said(run)
    assert "defaultMode: default, from .claude/settings.json (turn plan mode off)" in said
    assert "plan mode" in _last_tool_result(fake_llm)

    trusted = run_agent("trust", "--yes", server=fake_llm, workspace=workspace, home=decoy_home)
    assert trusted.code == 0, trusted.stderr
    fake_llm.script(_write("made.txt"), Reply.text("done"))
    run = _run(fake_llm, workspace, decoy_home)
    assert "wants to set" not in run.stderr
    assert (workspace / "made.txt").read_text() == "written\n"


def test_the_repl_asks_naming_the_key_and_a_no_keeps_the_persons_plan_mode(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_person_config(decoy_home, "plan_mode: true\n")
    (workspace / "agent.yaml").write_text("plan_mode: false\n")
    (workspace / "app.py").write_text("x = 'old'\n")
    edit = {"path": "app.py", "old_string": "old", "new_string": "new"}
    fake_llm.script(Reply.tool_call("edit_file", edit), Reply.text("Plan: 1. change it."))

    term = spawn("--yes")
    asked = " ".join(clean(term.expect(r"Allow this for this directory\? \[y/N\]")).split())
    term.send_line("n")
    term.expect("Not applied; `agent trust` allows it later.")
    term.prompt()
    term.send_line("rename old")
    term.expect("Approve the plan")
    term.send_line("n")
    term.prompt()
    term.exit()

    assert "plan_mode: false (turn plan mode off)" in asked
    assert "Plan mode is on" in str(fake_llm.requests[0].body)
    assert (workspace / "app.py").read_text() == "x = 'old'\n"
