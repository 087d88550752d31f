"""``--permission-mode`` and Claude Code's ``defaultMode``, in a real run: what runs without
asking, plan mode from the start, and a flag that contradicts another."""

from __future__ import annotations

import json
from pathlib import Path

from agent.permissions.plan import INSTRUCTION
from tests.fakes.cli import MODELS, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn

MODEL = ("--model", MODELS["anthropic"])
EDIT = {"path": "app.py", "old_string": "v1", "new_string": "v2"}


def _edit_then_touch(fake_llm: FakeLlmServer, workspace: Path, answer: str) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(
        Reply.tool_call("edit_file", EDIT),
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text(answer),
    )


def test_plan_mode_from_the_flag_plans_and_changes_nothing(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _edit_then_touch(fake_llm, workspace, "1. Change v1 to v2.")

    run = run_agent(
        "-p", "bump it", "--permission-mode", "plan", "--yes", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "1. Change v1 to v2."
    assert (workspace / "app.py").read_text() == "print('v1')\n"
    assert not (workspace / "made").exists()
    bodies = [str(request.body) for request in fake_llm.requests]
    assert INSTRUCTION[:40] in bodies[0]
    assert "plan mode: edit_file changes files" in bodies[1]


def test_accept_edits_from_the_flag_edits_without_asking_but_not_commands(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _edit_then_touch(fake_llm, workspace, "Edited.")

    run = run_agent(
        "-p", "bump it", "--permission-mode", "acceptEdits", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert (workspace / "app.py").read_text() == "print('v2')\n"
    assert not (workspace / "made").exists()  # a command still needs approval: refused in -p


def test_the_persons_claude_default_mode_applies_and_is_said(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (decoy_home / ".claude").mkdir()
    (decoy_home / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "acceptEdits"}})
    )
    _edit_then_touch(fake_llm, workspace, "Edited.")

    run = run_agent("-p", "bump it", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 0, run.stderr
    assert (workspace / "app.py").read_text() == "print('v2')\n"
    said = " ".join(run.stderr.split())
    assert "defaultMode acceptEdits from ~/.claude/settings.json: file edits run" in said


def test_a_mode_flag_contradicting_another_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    both = run_agent(
        "-p", "hi", "--yes", "--permission-mode", "default", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip
    unknown = run_agent(
        "-p", "hi", "--permission-mode", "dontAsk", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert both.code == 2
    assert "--permission-mode and the flag setting approval conflict; use one" in " ".join(
        both.stderr.split()
    )
    assert unknown.code == 2
    assert "dontAsk" in unknown.stderr
    assert "bypassPermissions" in unknown.stderr  # the choices are listed
    assert "Traceback" not in both.stderr + unknown.stderr
    assert fake_llm.requests == []


def test_a_projects_plan_mode_starts_the_repl_in_plan_mode(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"defaultMode": "plan"}})
    )
    term = spawn()

    greeting = " ".join(term.prompt().split())
    term.expect("plan ›")
    shown = term.command("/permissions")
    term.exit()

    assert "defaultMode plan from .claude/settings.json: plan mode" in greeting
    listed = " ".join(shown.split())
    assert "Mode: plan (Shift-Tab cycles)" in listed
    assert "Started as defaultMode plan from .claude/settings.json" in listed


def test_hooks_see_plan_as_the_permission_mode_while_planning(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    write_person_config(
        decoy_home,
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n"
        f"        - {{type: command, command: 'cat > {seen}'}}\n",
    )
    fake_llm.script(Reply.text("1. Nothing to change."))

    run = run_agent(
        "-p", "plan it", "--permission-mode", "plan", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert json.loads(seen.read_text())["permission_mode"] == "plan"


def test_stream_json_init_names_the_mode_as_claude_code_does(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("1. Nothing."))

    run = run_agent(
        "-p", "plan it", "--permission-mode", "plan", "--output-format", "stream-json",
        "--verbose", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    init = json.loads(run.stdout.splitlines()[0])
    assert (init["subtype"], init["permissionMode"]) == ("init", "plan")
