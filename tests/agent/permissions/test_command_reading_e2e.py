"""A deny rule holds however the model spells the command, end to end: the real ``agent -p``
with ``--yes``, the fake LLM server, a decoy home and workspace (their canaries are checked by
the fixtures)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

MODEL = MODELS["anthropic"]

SPELLINGS = [
    "bash -c 'touch one'",
    "/usr/bin/env touch two",
    "{ touch three; }",
    "tou\\\nch four",
    "echo five | xargs touch",
    "find . -maxdepth 0 -exec touch six \\;",
    "t'ouch' seven",
]


def _results(fake_llm: FakeLlmServer) -> list[str]:
    """What the model was told after each call: the last message of every later request."""
    return [str(request.body["messages"][-1]) for request in fake_llm.requests[1:]]


def test_hidden_spellings_and_an_unreadable_program_are_refused_under_yes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "agent.yaml").write_text("permissions:\n  deny: ['Bash(touch:*)']\n")
    fake_llm.script(
        *(Reply.tool_call("run_command", {"command": command}) for command in SPELLINGS),
        Reply.tool_call("run_command", {"command": "x=touch; $x eight"}),
        Reply.text("Could not."),
    )

    run = run_agent(
        "-p", "make them", "--yes", "--model", MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    made = {"one", "two", "three", "four", "five", "six", "seven", "eight"}
    assert not made & {path.name for path in workspace.iterdir()}
    results = _results(fake_llm)
    for told in results[: len(SPELLINGS)]:
        assert "permission rule deny: Bash(touch:*)" in told
    unreadable = results[len(SPELLINGS)]
    assert "non-interactively" in unreadable
    assert "`$x`" in unreadable  # the reason names the part that could not be read


def test_a_denied_read_holds_for_commands_that_name_the_file(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / ".env").write_text("KEY=sekrit-value\n")
    (workspace / "agent.yaml").write_text("permissions:\n  deny: ['Read(./.env)']\n")
    commands = [
        "cat .env",
        "python3 -c \"print(open('.env').read())\"",
        "grep -r KEY .",
        "cp .env copy.txt",
    ]
    fake_llm.script(
        *(Reply.tool_call("run_command", {"command": command}) for command in commands),
        Reply.text("Could not."),
    )

    run = run_agent(
        "-p", "show the key", "--yes", "--model", MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    for told in _results(fake_llm):
        assert "permission rule deny: Read(./.env)" in told
        assert "sekrit-value" not in told
    assert not (workspace / "copy.txt").exists()
