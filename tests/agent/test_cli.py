"""The command line: clear messages and exit code 2 for bad keys, config and flags."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.fakes.cli import (
    NO_KEYS,
    PrintRun,
    agent_command,
    agent_env,
    run_agent,
    write_person_config,
)
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer


def test_version_is_printed(fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path) -> None:
    run = run_agent("--version", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 0
    assert run.stdout.startswith("agent ")


def test_missing_api_key_names_the_variable_and_the_config_key(
    fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    run = print_run("hi", env={**NO_KEYS, "AGENT_NO_LOCAL_DEFAULT": "1"})
    assert run.code == 2, run.stderr
    assert "ANTHROPIC_API_KEY" in run.stderr
    assert "api_key_env" in run.stderr
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("config", "said"),
    [
        # The file, each bad key and value, and what is allowed.
        (
            "approval: sometimes\nmax_steps: lots\n",
            ["agent.yaml", "approval", "full-auto", "max_steps", "'lots'"],
        ),
        ("recovery:\n  max_atempts: 3\n", ["recovery.max_atempts", "max_attempts"]),
        ("model: [unclosed\n", ["not valid YAML"]),
    ],
)
def test_a_bad_config_is_a_usage_error_that_says_what_is_wrong(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, config: str, said: list[str]
) -> None:
    (workspace / "agent.yaml").write_text(config)
    run = run_agent("-p", "hi", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    for words in said:
        assert words in run.stderr


def test_bad_flag_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent("--frobnicate", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    assert "--frobnicate" in run.stderr


def test_a_bad_choice_lists_the_allowed_values_without_library_noise(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent("--approval", "yolo", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    assert "'yolo' is not one of ask, auto-edit, full-auto." in run.stderr
    assert "Value error" not in run.stderr


def test_a_prompt_without_p_suggests_p(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent("fix the test", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    assert "agent -p 'fix the test'" in run.stderr
    assert "No such command" not in run.stderr
    typo = run_agent("sesions", server=fake_llm, workspace=workspace, home=decoy_home)
    assert "Did you mean 'sessions'?" in typo.stderr


def test_bad_model_reference_is_a_usage_error(print_run: PrintRun) -> None:
    run = print_run("hi", model="gpt4")
    assert run.code == 2
    assert "provider:model" in run.stderr


def test_json_output_reports_setup_errors_too(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("max_steps: 0\n")
    run = run_agent(
        "-p", "hi", "--output-format", "json", server=fake_llm, workspace=workspace, home=decoy_home
    )
    assert run.code == 2
    assert json.loads(run.stdout)["status"] == "error"


def test_user_config_and_flag_precedence(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, print_run: PrintRun
) -> None:
    write_person_config(decoy_home, "model: anthropic:from-user-config\n")
    (workspace / "agent.yaml").write_text("model: anthropic:from-project\n")
    fake_llm.script(Reply.text("one"), Reply.text("two"))

    run_agent("-p", "hi", server=fake_llm, workspace=workspace, home=decoy_home)
    print_run("hi", model="anthropic:from-flag")

    assert [r.model for r in fake_llm.requests] == ["from-project", "from-flag"]


def test_missing_file_tool_error_is_recovered_from(
    fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n")
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "app.py"}),
        Reply.tool_call("list_files", {"pattern": "**/*.py"}),
        Reply.tool_call("read_file", {"path": "src/app.py"}),
        Reply.text("x is 1."),
    )
    run = print_run("what is x?")
    assert run.code == 0, run.stderr
    assert "x is 1." in run.stdout
    error_result = json.dumps(fake_llm.requests[1].body)
    assert "app.py" in error_result
    assert "list_files" in error_result


def test_max_steps_stops_the_turn(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(*[Reply.tool_call("list_files", {"pattern": "*"}) for _ in range(3)])
    run = run_agent(
        "-p",
        "loop",
        "--max-steps",
        "2",
        "--output-format",
        "json",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 1
    data = run.json()
    assert data["status"] == "max_steps"
    assert len(fake_llm.requests) == 2


def test_prompt_can_come_from_stdin(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Read it."))
    proc = subprocess.run(
        agent_command("-p", "-", "--model", "anthropic:claude-test"),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        input="summarise\nthis text\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "summarise\\nthis text" in json.dumps(fake_llm.requests[0].body)


def test_empty_prompt_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent("-p", "  ", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    assert "empty" in run.stderr


def test_an_unusable_checkpoint_directory_is_a_clear_setup_error(
    decoy_home: Path, print_run: PrintRun
) -> None:
    (decoy_home / ".agent").mkdir()
    (decoy_home / ".agent" / "checkpoints").write_text("not a directory")
    run = print_run("hi")
    assert run.code == 2
    assert "Cannot keep undo checkpoints" in run.stderr + run.stdout
    assert "Traceback" not in run.stderr


def test_a_p_without_a_value_gets_an_empty_prompt_and_nothing_else_changes() -> None:
    from agent.cli import _option_names
    from agent.setup.flags import with_empty_prompt

    options = _option_names()

    assert with_empty_prompt(["-p", "--resume", "01a"], options) == ["-p", "", "--resume", "01a"]
    assert with_empty_prompt(["-r=01a", "--print"], options) == ["-r=01a", "--print", ""]
    assert with_empty_prompt(["-p", "-v"], options) == ["-p", "", "-v"]
    assert with_empty_prompt(["-p", "--not-an-option"], options) == ["-p", "--not-an-option"]
    assert with_empty_prompt(["-p", "-"], options) == ["-p", "-"]
    assert with_empty_prompt(["--", "-p"], options) == ["--", "-p"]


def test_set_overrides_any_config_key_and_dedicated_flags_win(
    fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    (workspace / "agent.yaml").write_text("model: anthropic:from-project\nmax_steps: 9\n")
    fake_llm.script(*[Reply.tool_call("list_files", {"pattern": "*"}) for _ in range(3)])
    run = print_run(
        "loop",
        "--set",
        "max_steps=2",
        "--set",
        "model=anthropic:from-set",
        "--output-format",
        "json",
        model="anthropic:from-flag",
    )
    assert run.code == 1, run.stderr
    assert run.json()["status"] == "max_steps"
    assert [r.model for r in fake_llm.requests] == ["from-flag", "from-flag"]


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("max_steps", "is not KEY=VALUE"),
        ("recovery.max_atempts=3", "command line: recovery.max_atempts: unknown key"),
        ("max_steps=lots", "max_steps: got 'lots'"),
    ],
)
def test_a_bad_set_is_a_usage_error_that_says_what_is_wrong(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, setting: str, said: str
) -> None:
    run = run_agent(
        "-p", "hi", "--set", setting, server=fake_llm, workspace=workspace, home=decoy_home
    )
    assert run.code == 2
    assert said in run.stderr
    assert "Traceback" not in run.stderr
    assert fake_llm.requests == []


def test_yes_wins_over_approval(fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path) -> None:
    fake_llm.script(
        Reply.tool_call("write_file", {"path": "a.txt", "content": "x"}), Reply.text("ok")
    )
    run = run_agent(
        "-p",
        "write",
        "--approval",
        "ask",
        "--yes",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    assert (workspace / "a.txt").read_text() == "x"


def test_sessions_with_a_bad_config_says_what_is_wrong(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("approval: sometimes\n")
    run = run_agent("sessions", server=fake_llm, workspace=workspace, home=decoy_home)
    assert run.code == 2
    assert "approval" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_command_line_offers_exactly_the_modes_the_config_takes() -> None:
    # The command line keeps its own light copies so `agent --version` need not import the
    # tools; this keeps them from drifting apart.
    from agent.setup.choices import Approval, SandboxMode
    from tools.guard.sandbox import SandboxMode as ConfigSandboxMode
    from tools.hooks import ApprovalMode

    assert [mode.value for mode in Approval] == [mode.value for mode in ApprovalMode]
    assert [mode.value for mode in SandboxMode] == [mode.value for mode in ConfigSandboxMode]


def test_every_permission_mode_the_command_line_takes_names_settings() -> None:
    from agent.setup.choices import PermissionMode
    from agent.setup.flags import PERMISSION_MODES

    assert [mode.value for mode in PermissionMode] == list(PERMISSION_MODES)
    # The flags keep their own copy (importing the permission package would slow every
    # start); it must say what the modes module does.
    from agent.permissions.modes import MODE_IDS, mode_settings

    assert {mode: mode_settings(mode) for mode in MODE_IDS} == PERMISSION_MODES
