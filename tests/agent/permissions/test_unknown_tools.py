"""A rule naming no tool (``--disallowedTools bash``) is said, with a "did you mean", wherever
it was written; also under ``-p``, on stderr, leaving stream-json's stdout whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.permissions import PermissionSettings
from agent.permissions.claude_files import origin_key
from agent.permissions.listing import did_you_mean, ignored_because, unknown_tool_warning
from agent.permissions.rules import parse_rule
from tests.fakes.cli import MODELS, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn, clean

MODEL = MODELS["anthropic"]


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("bash", "Bash"),
        ("READ", "Read"),
        ("edit", "Edit"),
        ("Bsh", "Bash"),
        ("run_comand", "run_command"),
        ("write_files", "write_file"),
        ("webfetch", "WebFetch"),
        ("frobnicate", None),
    ],
)
def test_did_you_mean_finds_the_same_name_in_other_case_or_a_close_one(
    name: str, meant: str | None
) -> None:
    assert did_you_mean(name) == meant


@pytest.mark.parametrize(
    "text",
    [
        "Bash",
        "Bash(npm test:*)",
        "run_command",
        "Read(./.env)",
        "mcp__github__create_issue",
        "mcp__github",
        "mcp__*",
        "WebFetch(domain:example.com)",
        "WebSearch",
        "ToolSearch",  # Claude Code's, absent here: /permissions notes it
        "NotebookEdit",
    ],
)
def test_known_mcp_pattern_and_claude_code_names_are_not_warned_about(text: str) -> None:
    assert unknown_tool_warning("deny", text, "--disallowedTools") is None


def test_an_unknown_name_says_where_it_was_written_and_what_was_meant() -> None:
    warning = unknown_tool_warning("deny", "bash(rm:*)", "--disallowedTools")

    assert warning == (
        "--disallowedTools: no tool is named 'bash' (did you mean Bash?), so the deny rule "
        "'bash(rm:*)' matches nothing"
    )
    nothing_close = unknown_tool_warning("allow", "frobnicate", "agent.yaml")
    assert nothing_close is not None
    assert "tools: Bash, Read, Edit, Write, Grep, Glob, mcp__server__tool" in nothing_close


def test_permission_settings_warn_once_per_rule_naming_its_origin() -> None:
    settings = PermissionSettings(
        deny=["Bash(rm:*)", "grep"], disallowed_tools=["bash"], allowed_tools=["Reed"]
    )
    settings.with_origins(
        {origin_key("deny", "grep"): "agent.yaml", origin_key("deny", "bash"): "--disallowedTools"},
        ["a settings problem"],
    )

    warnings = settings.warnings

    assert warnings[0] == "a settings problem"
    assert len(warnings) == 4
    assert any(w.startswith("--disallowedTools: no tool is named 'bash'") for w in warnings)
    assert any("'Reed' (did you mean Read?)" in w for w in warnings)
    assert any(w.startswith("agent.yaml: no tool is named 'grep' (did") for w in warnings)
    assert any(w.startswith("permissions: no tool is named 'Reed'") for w in warnings)


def test_permissions_listing_note_says_what_was_meant() -> None:
    assert ignored_because(parse_rule("bash")) == "ignored: no bash tool here; did you mean Bash?"
    assert ignored_because(parse_rule("ToolSearch")) == "ignored: no ToolSearch tool here"
    assert ignored_because(parse_rule("WebSearch")) == ""
    assert ignored_because(parse_rule("WebFetch(domain:example.com)")) == ""


def test_a_rule_for_one_of_our_tools_the_session_lacks_is_noted_as_ignored() -> None:
    offered = {"run_command", "read_file", "web_fetch"}
    assert ignored_because(parse_rule("WebSearch"), offered) == (
        "ignored: web search is not set up (agent doctor says how)"
    )
    assert ignored_because(parse_rule("Skill"), offered) == "ignored: no Skill tool in this session"
    assert ignored_because(parse_rule("Bash(ls:*)"), offered) == ""
    assert ignored_because(parse_rule("WebSearch"), {*offered, "web_search"}) == ""
    # A server's tools come when it is up: a rule for one is never called ignored.
    assert ignored_because(parse_rule("mcp__docs__search"), offered) == ""


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_print_mode_warns_on_stderr_and_keeps_stream_json_whole(
    output_format: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Hello."))
    extra = ["--verbose"] if output_format == "stream-json" else []

    run = run_agent(
        "-p",
        "hi",
        "--disallowedTools",
        "bash",
        "--output-format",
        output_format,
        *extra,
        "--model",
        MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert "--disallowedTools: no tool is named 'bash' (did you mean Bash?)" in run.stderr
    assert "bash" not in run.stdout.replace("Hello.", "")
    if output_format == "stream-json":
        for line in run.stdout.splitlines():
            json.loads(line)


def test_a_claude_settings_file_and_the_config_file_are_named_in_the_warning(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    claude = decoy_home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"permissions": {"deny": ["read(.env)"]}}))
    write_person_config(decoy_home, "permissions:\n  ask: [Run_Command]\n")
    fake_llm.script(Reply.text("Hello."))

    run = run_agent(
        "-p", "hi", "--model", MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "settings.json: no tool is named 'read' (did you mean Read?)" in run.stderr
    assert "config.yaml: no tool is named 'Run_Command' (did you mean run_command?)" in run.stderr


def test_a_custom_commands_allowed_tools_are_checked_when_it_runs(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    command = decoy_home / ".config" / "agent" / "commands" / "ship.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\nallowed-tools: bash(git push:*)\n---\nShip it.\n")
    fake_llm.script(Reply.text("Shipped."))

    run = run_agent(
        "-p", "/ship", "--model", MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 0, run.stderr
    assert "/ship allowed-tools: no tool is named 'bash' (did you mean Bash?)" in run.stderr


def test_the_repl_says_it_at_start(spawn: Spawn) -> None:
    term = spawn("--disallowedTools", "bash")
    shown = clean(term.prompt())
    term.exit()

    flat = "".join(shown.split())  # the notice wraps on the screen
    assert "--disallowedTools:notoolisnamed'bash'(didyoumeanBash?)" in flat


def test_permissions_in_the_repl_notes_a_web_search_rule_with_no_search_set_up(
    spawn: Spawn,
) -> None:
    term = spawn("--disallowedTools", "WebSearch")
    term.prompt()
    term.send_line("/permissions")
    shown = clean(term.prompt())
    term.exit()

    flat = " ".join(shown.split())
    assert "deny WebSearch" in flat
    assert "ignored: web search is not set up" in flat
