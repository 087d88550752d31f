"""End to end through the real ``agent -p``: no secret in AGENT_HOME, which is private, and
hostile tool arguments end as tool errors, not as "Internal error"."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.fakes.cli import MODELS, AgentRun, Protocol, run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import Spawn

KEY = "Zq8w4Lk2Vn7Rt5Yp1Hm9Xc3Bd6Fg0JsQeUa"
"""A deploy token: no known key shape, so it is found only as a known environment value."""


def key_fragments(root: Path, size: int = 8) -> list[str]:
    """Each file under ``root`` holding a piece of `KEY` at least ``size`` characters long."""
    pieces = {KEY[i : i + size].encode() for i in range(len(KEY) - size + 1)}
    return [
        f"{path}: {piece.decode()}"
        for path in sorted(root.rglob("*"))
        if path.is_file()
        for piece in pieces
        if piece in path.read_bytes()
    ]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_key_straddling_the_output_trim_never_reaches_agent_home(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # The key sits where the default 30,000-character trim cuts: 25,000 characters in,
    # 10,000 from the end. The command reads it from a file so it is not in the call itself.
    (workspace / ".env").write_text(KEY)
    command = "python3 -c \"print('A'*25000 + open('.env').read() + 'B'*9971)\""
    fake_llm.script(
        Reply.tool_call("run_command", {"command": command}),
        Reply.text("Printed it."),
    )

    run = run_agent(
        "-p",
        "print the token",
        "--yes",
        "--model",
        MODELS[protocol],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env={"DEPLOY_TOKEN": KEY},
    )

    assert run.code == 0, run.stderr
    agent_home = decoy_home / ".agent"
    [session] = list((agent_home / "sessions").glob("*.jsonl"))
    assert "cut from the middle" in session.read_text()  # the trimmed output was saved
    # Undo keeps copies of the workspace's own files (.env among them) under checkpoints/,
    # private to the person; nothing else under AGENT_HOME may hold the key.
    leaks = key_fragments(agent_home)
    assert all("/checkpoints/" in leak for leak in leaks), leaks
    for path in (agent_home / "checkpoints").rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) in {0o600, 0o700}, path
    assert not any(piece in run.stdout + run.stderr for piece in (KEY[:8], KEY[-8:]))
    sent_back = str(fake_llm.requests[-1].body)
    assert "cut from the middle" in sent_back
    assert KEY[-8:] not in sent_back  # the model saw it masked too


def test_agent_home_and_everything_in_it_is_private(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.tool_call("read_file", {"path": "a.txt"}), Reply.text("Read it."))
    (workspace / "a.txt").write_text("hello\n")

    run = run_agent(
        "-p", "read a.txt", server=fake_llm, workspace=workspace, home=decoy_home, timeout=60
    )

    assert run.code == 0, run.stderr
    agent_home = decoy_home / ".agent"
    too_open = [
        f"{path}: {oct(stat.S_IMODE(path.lstat().st_mode))}"
        for path in [agent_home, *agent_home.rglob("*")]
        if stat.S_IMODE(path.lstat().st_mode) & 0o077
    ]
    assert too_open == []
    assert (agent_home / "sessions").is_dir()
    assert (agent_home / "logs").is_dir()


@pytest.mark.parametrize(
    "path",
    [pytest.param("a\x00b", id="nul-byte"), pytest.param("nested", id="nested-500-deep")],
)
@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_hostile_tool_arguments_are_tool_errors(
    protocol: Protocol, path: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    argument: object = path
    if path == "nested":
        for _ in range(500):
            argument = {"a": argument}
    fake_llm.script(
        Reply.tool_call("read_file", {"path": argument}), Reply.text("I will ask for a path.")
    )

    run = run_agent(
        "-p",
        "read it",
        "--model",
        MODELS[protocol],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert "Internal error" not in run.stdout + run.stderr
    assert "I will ask for a path." in run.stdout
    result = str(fake_llm.requests[-1].body)
    assert "NUL byte" in result or "nested more than 32 levels deep" in result


KEY = "sk-ant-test-key-0123456789"  # what tests.fakes.cli puts in the environment


def _printed(fake_llm: FakeLlmServer, workspace: Path, home: Path, output: str) -> AgentRun:
    """``agent -p`` with ``--output-format output``, answered by what ``fake_llm`` scripts."""
    return run_agent(
        "-p",
        "what is my key?",
        "--model",
        MODELS["anthropic"],
        "--output-format",
        output,
        server=fake_llm,
        workspace=workspace,
        home=home,
    )


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_server_error_quoting_the_key_is_shown_without_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, output: str
) -> None:
    # Some proxies echo the credential they refused, in a retried error and in a final one.
    quoting = f"upstream refused api key {KEY}"
    fake_llm.script(
        Fault.status(500, message=quoting),
        Fault.status(401, "authentication_error", message=quoting),
    )

    run = _printed(fake_llm, workspace, decoy_home, output)

    assert run.code != 0
    assert "upstream refused api key" in run.stdout + run.stderr
    assert KEY not in run.stdout
    assert KEY not in run.stderr


@pytest.mark.parametrize("output", ["text", "json"])
def test_an_answer_repeating_the_key_is_printed_without_it(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, output: str
) -> None:
    fake_llm.script(Reply.text(f"Your key is {KEY}, keep it safe."))

    run = _printed(fake_llm, workspace, decoy_home, output)

    assert run.code == 0, run.stderr
    assert "keep it safe" in run.stdout
    assert KEY not in run.stdout + run.stderr


def test_an_answer_streamed_to_a_terminal_never_shows_the_key(
    fake_llm: FakeLlmServer, spawn: Spawn
) -> None:
    # The server sends the text in two deltas, cut inside the key: a terminal gets the answer
    # as it streams, and nothing printed can be taken back.
    fake_llm.script(Reply.text(f"Your key is {KEY}, keep it safe."))

    terminal = spawn("-p", "what is my key?")
    shown = terminal.ended(timeout=60)

    assert "keep it safe" in shown
    assert "[redacted" in shown
    assert KEY[:12] not in shown
