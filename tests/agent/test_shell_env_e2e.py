"""Commands and MCP servers do not get the provider keys, as the person runs the agent:
``agent -p`` against the fake LLM server (a model's run_command, a custom command's
``!`cmd```), an MCP stdio server started the way a session starts it, and ``/doctor``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.setup.command_env import command_env
from agent.setup.config import Config
from agent.setup.doctor import shell_env_findings
from agent.setup.mcp_setup import start_servers
from agent.setup.startup import secret_redactor
from tests.fakes.cli import PrintRun, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.mcp_harness import stdio_settings, wait_for_state
from tests.fakes.terminal import Spawn
from tools.guard.sandbox import Sandbox, SandboxSettings
from tools.mcp.supervisor import ServerState

FAKE_KEY = "sk-ant-test-0123456789abcdefXYZ"
"""What the person's shell has in ANTHROPIC_API_KEY (the fake server takes any key)."""
PROBE = (
    'echo "key=${ANTHROPIC_API_KEY:-unset} openai=${OPENAI_API_KEY:-unset} '
    "corp=${CORP_LLM_CRED:-unset} gh=${GH_TOKEN:-unset} region=${AWS_REGION:-unset} "
    'ci=${CI:-unset}"; env'
)
EXPECTED = "key=unset openai=unset corp=unset gh=unset region=eu-west-1 ci=1"


def _user_config(home: Path, fake_llm: FakeLlmServer, shell_env: str = "{set: {CI: '1'}}") -> None:
    write_person_config(
        home,
        "providers:\n"
        f"  corp: {{type: openai, base_url: '{fake_llm.openai_url}', api_key_env: CORP_LLM_CRED}}\n"
        f"shell_env: {shell_env}\n",
    )


def _person_env() -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "CORP_LLM_CRED": "corp-credential-0123456789",
        "GH_TOKEN": "ghp_test0123456789",
        "AWS_REGION": "eu-west-1",
    }


def _tool_output(fake_llm: FakeLlmServer) -> str:
    return str(fake_llm.requests[-1].body)


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_a_models_command_under_print_mode_sees_no_key(
    output_format: str,
    fake_llm: FakeLlmServer,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    _user_config(decoy_home, fake_llm)
    fake_llm.script(Reply.tool_call("run_command", {"command": PROBE}), Reply.text("Done."))
    extra = ["--verbose"] if output_format == "stream-json" else []

    run = print_run(
        "show the environment", "--yes", "--output-format", output_format, *extra, env=_person_env()
    )

    assert run.code == 0, run.stderr
    sent_back = _tool_output(fake_llm)
    assert EXPECTED in sent_back
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CORP_LLM_CRED", "GH_TOKEN"):
        assert f"{name}=" not in sent_back
    assert "AWS_REGION=eu-west-1" in sent_back


def test_a_custom_commands_shell_line_sees_no_key(
    fake_llm: FakeLlmServer, decoy_home: Path, print_run: PrintRun
) -> None:
    _user_config(decoy_home, fake_llm)
    command = decoy_home / ".config" / "agent" / "commands" / "probe.md"
    command.parent.mkdir(parents=True)
    command.write_text(f"Environment: !`{PROBE.replace('; env', '')}`\n")
    fake_llm.script(Reply.text("Noted."))

    run = print_run("/probe", "--yes", env=_person_env())

    assert run.code == 0, run.stderr
    assert f"Environment: {EXPECTED}" in _tool_output(fake_llm)


def test_inherit_core_and_include_only_from_the_config_reach_the_command(
    fake_llm: FakeLlmServer, decoy_home: Path, print_run: PrintRun
) -> None:
    _user_config(decoy_home, fake_llm, "{inherit: core, include_only: [PATH, HOME]}")
    fake_llm.script(Reply.tool_call("run_command", {"command": PROBE}), Reply.text("Done."))

    run = print_run("show the environment", "--yes", env=_person_env())

    assert run.code == 0, run.stderr
    sent_back = _tool_output(fake_llm)
    assert "region=unset ci=unset" in sent_back
    assert f"HOME={decoy_home}" in sent_back
    assert "XDG_CONFIG_HOME=" not in sent_back


def test_an_mcp_stdio_server_gets_the_filtered_environment_and_its_own_env(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**_person_env(), "BUILD_FLAVOUR": "debug"}.items():
        monkeypatch.setenv(name, value)
    config = Config.model_validate(
        {
            "providers": {"corp": {"type": "openai", "api_key_env": "CORP_LLM_CRED"}},
            "shell_env": {"exclude": ["AWS_*"]},
        }
    )
    sandbox = Sandbox.create(SandboxSettings(mode="off"), env=command_env(config))
    # The person wrote this token into the server's entry: it passes.
    dump = tmp_path / "environment.json"
    entry = stdio_settings(
        tmp_path, env={"GITHUB_TOKEN": "${GH_TOKEN}", "FAKE_MCP_ENV_FILE": str(dump)}
    )
    servers = start_servers(
        {"fake": entry},
        workspace=workspace,
        environ=dict(os.environ),
        sandbox=sandbox,
        redact=lambda text: text,
    )
    try:
        wait_for_state(servers, "fake", {ServerState.READY})
    finally:
        servers.close()

    seen = json.loads(dump.read_text())
    assert seen["GITHUB_TOKEN"] == "ghp_test0123456789"
    assert seen["FAKE_MCP_STATE"] == str(tmp_path)
    for name in ("ANTHROPIC_API_KEY", "CORP_LLM_CRED", "GH_TOKEN", "AWS_REGION"):
        assert name not in seen
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["BUILD_FLAVOUR"] == "debug"  # the rest of the environment is inherited


def test_doctor_names_what_is_passed_and_withheld_never_a_value() -> None:
    config = Config.model_validate(
        {"providers": {"corp": {"type": "openai", "api_key_env": "CORP_LLM_CRED"}}}
    )
    environ = {"PATH": "/usr/bin", "EDITOR": "nano-editor-value", **_person_env()}

    findings = shell_env_findings(command_env(config), environ)

    text = "\n".join(f"{f.what}: {f.detail}" for f in findings)
    assert "passes 3: AWS_REGION, EDITOR, PATH" in text
    assert "withholds provider key: ANTHROPIC_API_KEY, CORP_LLM_CRED; secret name: GH_TOKEN" in text
    for value in environ.values():
        assert value not in text


def test_a_bang_line_in_the_repl_sees_no_key(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    _user_config(decoy_home, fake_llm)
    term = spawn(env=_person_env())
    term.prompt()

    shown = term.command(f"!{PROBE.replace('; env', '')}")
    term.exit()

    assert EXPECTED in shown


def test_the_repls_doctor_names_the_withheld_keys_and_shows_no_value(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    _user_config(decoy_home, fake_llm)
    fake_llm.script(Reply.text("ok"))
    term = spawn(env=_person_env())
    term.prompt()

    shown = term.command("/doctor")
    term.exit()

    flat = "".join(shown.split())  # long lines wrap on the screen
    assert "commandenvwithholdsproviderkey:ANTHROPIC_API_KEY,CORP_LLM_CRED" in flat
    assert "GH_TOKEN" in flat
    for value in _person_env().values():
        assert value not in flat


def test_a_token_handed_to_commands_in_set_is_masked_like_one_from_the_environment() -> None:
    config = Config.model_validate(
        {"shell_env": {"set": {"GH_TOKEN": "ghp_handed0123456789", "CI": "true-value-1"}}}
    )

    redact = secret_redactor(config, {}).text

    assert "ghp_handed0123456789" not in redact("token is ghp_handed0123456789")
    assert redact("ci is true-value-1") == "ci is true-value-1"
