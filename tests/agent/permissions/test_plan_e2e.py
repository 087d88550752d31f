"""Plan mode as the person meets it (``-p --permission-mode plan --yes``, the fake LLM
server, a decoy HOME): nothing the model calls changes anything, whatever a tool claims."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.cli import MODELS, AgentRun, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.mcp_harness import stdio_entry
from tests.fakes.terminal import Spawn
from tools.guard import landlock

PLAN = ("--permission-mode", "plan", "--yes", "--model", MODELS["anthropic"])


def _person_config(home: Path, config: dict[str, Any]) -> None:
    write_person_config(home, yaml.safe_dump(config))


def _plan(fake_llm: FakeLlmServer, workspace: Path, home: Path, *more: str) -> AgentRun:
    return run_agent(
        "-p", "look around", *PLAN, *more,
        server=fake_llm, workspace=workspace, home=home, timeout=180,
    )  # fmt: skip


def _results(fake_llm: FakeLlmServer) -> list[str]:
    """What each request after the first sent back: the last tool call's result."""
    return [json.dumps(request.body["messages"][-1]) for request in fake_llm.requests[1:]]


def test_an_mcp_tool_that_claims_to_only_read_is_refused_in_plan_mode(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    state = tmp_path / "mcp"
    state.mkdir()
    _person_config(decoy_home, {"mcp_servers": {"fake": stdio_entry(state)}})
    fake_llm.script(
        Reply.tool_call("mcp__fake__flaky_read", {}),
        Reply.tool_call("write_file", {"path": "plan.txt", "content": "x"}),
        Reply.text("1. Nothing to change."),
    )

    run = _plan(fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    # flaky_read claims to only read (readOnlyHint) and writes a marker: the claim is the
    # server's, not the person's word.
    assert not (state / "flaky_read_crashed").exists()
    assert not (workspace / "plan.txt").exists()
    refused, write = _results(fake_llm)
    assert "plan mode: mcp__fake__flaky_read is an MCP tool" in refused
    assert "permissions.read_only_tools" in refused  # how to mark it read-only
    assert "mcp__fake__flaky_*" in refused
    assert "plan mode: write_file changes files" in write


def test_mcp_tools_the_person_marked_read_only_run_in_plan_mode(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    state = tmp_path / "mcp"
    state.mkdir()
    _person_config(
        decoy_home,
        {
            "mcp_servers": {"fake": stdio_entry(state)},
            "permissions": {"read_only_tools": ["mcp__fake__ec*"]},
        },
    )
    fake_llm.script(
        Reply.tool_call("mcp__fake__echo", {"text": "hi"}),
        Reply.tool_call("mcp__fake__flaky_read", {}),
        Reply.text("1. Nothing to change."),
    )

    run = _plan(fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    echoed, refused = _results(fake_llm)
    assert "echo: hi" in echoed
    assert "is an MCP tool" in refused
    assert not (state / "flaky_read_crashed").exists()


def test_read_only_tools_must_name_mcp_tools(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _person_config(decoy_home, {"permissions": {"read_only_tools": ["run_command"]}})

    run = _plan(fake_llm, workspace, decoy_home)

    assert run.code != 0
    assert "read_only_tools" in run.stderr
    assert "'run_command' is not an MCP tool name" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("sandbox", ["workspace-write", "off"])
def test_a_plan_mode_command_cannot_write_or_reach_the_network(
    sandbox: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    if landlock.abi_version() < 4:
        pytest.skip("this kernel cannot block TCP (Landlock ABI 4, Linux 6.7+)")
    (workspace / "notes.txt").write_text("hello\nhello\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "notes.txt"], cwd=workspace, check=True)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        connect = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
        fake_llm.script(
            # Programs on the read-only list, with options that write or run a program.
            Reply.tool_call("run_command", {"command": "uniq notes.txt out.txt"}),
            Reply.tool_call(
                "run_command",
                {"command": f"git grep --open-files-in-pager={shlex.quote(connect)} -e hello"},
            ),
            Reply.text("1. Nothing to change."),
        )

        run = _plan(fake_llm, workspace, decoy_home, "--sandbox", sandbox)

        assert run.code == 0, run.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing connected
    assert not (workspace / "out.txt").exists()
    wrote, _ = _results(fake_llm)
    assert "plan mode" in wrote
    assert "may write only inside the workspace" not in wrote  # not the workspace-write hint


def test_permissions_lists_the_tools_the_person_marked_read_only(
    spawn: Spawn, decoy_home: Path
) -> None:
    _person_config(decoy_home, {"permissions": {"read_only_tools": ["mcp__github__get_*"]}})
    term = spawn()
    term.prompt()
    shown = " ".join(term.command("/permissions").split())
    term.exit()

    assert "Run in plan mode (you marked them read-only): mcp__github__get_*" in shown
