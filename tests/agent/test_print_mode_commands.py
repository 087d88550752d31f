"""``agent -p "/init"`` and ``agent -p "/plan ..."``, and what -p does with another ``/word``."""

from __future__ import annotations

from pathlib import Path

from agent.permissions.plan import INSTRUCTION
from agent.terminal.command_runner import INIT_PROMPT, names_a_path
from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

MODEL = ("--model", MODELS["anthropic"])


def test_init_in_print_mode_writes_agents_md_through_the_model_with_the_repls_prompt(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "AGENTS.md", "content": "# Test\npytest\n"}),
        Reply.text("Wrote AGENTS.md."),
    )

    run = run_agent(
        "-p", "/init", "--yes", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "Wrote AGENTS.md." in run.stdout
    assert (workspace / "AGENTS.md").read_text() == "# Test\npytest\n"
    assert INIT_PROMPT.split(". ")[0] in str(fake_llm.requests[0].body)


def test_plan_in_print_mode_looks_answers_with_the_plan_and_changes_nothing(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "app.py").write_text("print('v1')\n")
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "app.py"}),
        Reply.tool_call("edit_file", {"path": "app.py", "old_string": "v1", "new_string": "v2"}),
        Reply.tool_call("run_command", {"command": "touch made"}),
        Reply.text("1. Change v1 to v2 in app.py."),
    )

    run = run_agent(
        "-p",
        "/plan bump the version in @app.py",
        "--yes",
        *MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert run.stdout.strip() == "1. Change v1 to v2 in app.py."
    assert (workspace / "app.py").read_text() == "print('v1')\n"
    assert not (workspace / "made").exists()
    bodies = [str(request.body) for request in fake_llm.requests]
    assert INSTRUCTION[:40] in bodies[0]
    assert "bump the version in @app.py" in bodies[0]
    assert '<file path="app.py">' in bodies[0]  # the mention was attached
    assert "plan mode: edit_file changes files" in bodies[2]
    assert "plan mode: only read-only commands run" in bodies[3]


def test_plan_without_a_request_and_an_unknown_command_are_usage_errors(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / ".agent" / "commands").mkdir(parents=True)
    (workspace / ".agent" / "commands" / "review.md").write_text("Review the code.\n")

    bare = run_agent("-p", "/plan", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home)
    unknown = run_agent(
        "-p", "/reviwe this", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )
    repl_only = run_agent(
        "-p", "/memory", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert bare.code == 2
    assert "/plan needs a request" in bare.stderr
    assert unknown.code == 2
    assert "/reviwe is not a command -p runs" in unknown.stderr
    assert "/init, /plan <request>" in unknown.stderr
    assert "/review" in unknown.stderr
    assert repl_only.code == 2
    assert "work only in the REPL" in repl_only.stderr
    assert fake_llm.requests == []


def test_a_prompt_that_starts_with_an_absolute_path_is_sent_as_text(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("It is a shell."), Reply.text("A temp dir."))

    path = run_agent(
        "-p",
        "/bin/sh -c true: what does it do?",
        *MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    existing = run_agent(
        "-p", "/tmp is what?", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert path.code == 0, path.stderr
    assert existing.code == 0, existing.stderr
    assert "/bin/sh -c true: what does it do?" in str(fake_llm.requests[0].body)
    assert "/tmp is what?" in str(fake_llm.requests[1].body)


def test_what_names_a_path() -> None:
    assert names_a_path("/usr/bin/env python")
    assert names_a_path("/tmp")
    assert not names_a_path("/init")
    assert not names_a_path("/plan do /x")
