"""End to end: MCP servers that misbehave before they ever speak MCP (one that writes garbage,
one that hangs, one that crashes at each start) never reach the screen but as our one-line
notices, and no turn or command waits for them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.fakes.cli import MODELS, Protocol, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest
from tests.fakes.mcp_harness import (
    agent_log,
    answer_once_ready,
    crashing_entry,
    garbage_entry,
    gated_entry,
    hanging_entry,
    open_gate,
    stdio_entry,
    wait_for_log,
)
from tests.fakes.terminal import Spawn, clean
from tests.fakes.vendor_rules import request_problems

NEVER = 600
"""A start timeout no test reaches: a server shown "starting" was not waited for."""
LIBRARY_NOISE = ("Traceback", 'File "', "ValidationError", "pydantic", "JSONRPC", "notjson\n")


def _configure(home: Path, servers: dict[str, object]) -> None:
    write_person_config(home, yaml.safe_dump({"mcp_servers": servers}))


def _tool_names(request: RecordedRequest) -> set[str]:
    return {str(tool.get("name") or tool["function"]["name"]) for tool in request.body["tools"]}


def _last_user_text(request: RecordedRequest) -> str:
    """The text the request's last user turn carries (in OpenAI's wire, the user message that
    follows the tool messages)."""
    last = request.body["messages"][-1]
    assert last["role"] == "user", last
    content = last["content"]
    if isinstance(content, str):
        return content
    return " ".join(str(block.get("text", "")) for block in content)


def test_p_with_misbehaving_servers_prints_no_traceback_and_waits_for_none(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    (tmp_path / "garbage").mkdir()
    (tmp_path / "crash").mkdir()
    _configure(
        decoy_home,
        {
            "garbage": garbage_entry(tmp_path / "garbage"),
            "hang": hanging_entry(start_timeout=NEVER),
            "crash": crashing_entry(tmp_path / "crash"),
        },
    )
    fake_llm.script(Reply.text("Done without them."))

    run = run_agent(
        "-p", "hello", "--model", MODELS["anthropic"],
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert "Done without them." in run.stdout
    assert not any(noise in run.stderr for noise in LIBRARY_NOISE), run.stderr
    notices = run.stderr.split("• ")  # one each (-p's stderr wraps them at 80 columns)
    assert notices[0] == "", run.stderr
    assert len(notices) <= 4, run.stderr
    assert all(notice.startswith("MCP server ") for notice in notices[1:]), run.stderr
    [request] = fake_llm.requests
    assert not any(name.startswith("mcp__") for name in _tool_names(request))
    # The request went out while the hanging server was still on its first start, and the
    # model was told so.
    assert "MCP server 'hang' is not ready yet (still starting)" in _last_user_text(request)
    records = agent_log(decoy_home)
    parse_errors = [r for r in records if r.get("logger") == "mcp.client.stdio"]
    assert parse_errors
    assert "ValidationError" in str(parse_errors[0]["exception"])
    assert any(r.get("line") == "fatal: no database" for r in records)


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_late_servers_tools_join_the_turn_and_the_model_is_told(
    protocol: Protocol,
    fake_llm: FakeLlmServer,
    workspace: Path,
    decoy_home: Path,
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    _configure(decoy_home, {"slow": gated_entry(tmp_path, gate, start_timeout=NEVER)})
    (workspace / "notes.txt").write_text("notes\n")
    # The server can only be up once the first request has arrived: it opens the gate.
    answer_once_ready(
        fake_llm,
        decoy_home,
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Reply.text("done"),
        gate=gate,
    )

    run = run_agent(
        "-p", "read the notes", "--model", MODELS[protocol],
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=120,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    first, second = fake_llm.requests
    assert "mcp__slow__echo" not in _tool_names(first)
    assert "MCP server 'slow' is not ready yet (still starting)" in _last_user_text(first)
    assert "mcp__slow__echo" in _tool_names(second)
    told = _last_user_text(second)
    assert "MCP server 'slow' is ready; its tools are available now: mcp__slow__add" in told
    for request in (first, second):
        assert request_problems(protocol, request.body) == []


def test_mcp_list_prints_a_hanging_server_as_starting_at_once(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _configure(decoy_home, {"hang": hanging_entry(start_timeout=NEVER)})

    listed = run_agent("mcp", "list", server=fake_llm, workspace=workspace, home=decoy_home)

    assert listed.code == 0, listed.stderr
    assert re.search(r"^hang +starting$", listed.stdout, re.MULTILINE), listed.stdout
    assert "Still starting: hang. A session does not wait for them" in listed.stdout
    assert "`agent mcp list --wait 600` waits for them" in " ".join(listed.stdout.split())
    assert "Traceback" not in listed.stdout + listed.stderr


def test_mcp_list_waits_only_when_asked(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    _configure(decoy_home, {"crash": crashing_entry(tmp_path, start_timeout=NEVER)})

    listed = run_agent(
        "mcp", "list", "--wait", "60", server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert listed.code == 0, listed.stderr
    # It waited for the first start to fail, not for the start timeout.
    assert "crash            restarting" in listed.stdout, listed.stdout
    assert "fatal: no database" in listed.stdout
    assert "Still starting" not in listed.stdout


def test_mcp_list_on_a_terminal_updates_each_servers_line_in_place(
    spawn: Spawn, decoy_home: Path, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    _configure(
        decoy_home,
        {
            "late": gated_entry(tmp_path, gate, start_timeout=NEVER),
            "hang": hanging_entry(start_timeout=NEVER),
        },
    )
    term = spawn("mcp", "list", model=None)

    first = term.expect("Waiting for hang, late to start", timeout=60)  # sorted
    open_gate(gate)
    term.expect("Waiting for hang to start", timeout=60)  # late is up
    term.interrupt()
    out = term.ended()
    screen = [line for line in term.lines() if line.strip()]

    assert re.search(r"^late +starting$", first, re.MULTILINE), first
    assert re.search(r"^hang +starting$", first, re.MULTILINE), first
    # Each server keeps one line, redrawn in place; the waiting note gives way to the outcome.
    assert sum(line.startswith("late ") for line in screen) == 1, screen
    assert sum(line.startswith("hang ") for line in screen) == 1, screen
    assert any(re.match(r"late +ready, \d+ tools", line) for line in screen), screen
    assert "Still starting: hang." in " ".join(screen)
    assert not any(line.startswith("Waiting for") for line in screen), screen
    assert "Traceback" not in term.raw + out
    assert term.child.exitstatus == 130


def test_repl_shows_no_traceback_from_a_server_writing_garbage(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path, tmp_path: Path
) -> None:
    _configure(decoy_home, {"garbage": garbage_entry(tmp_path, max_failures=2, pause=NEVER)})
    fake_llm.script(Reply.text("all good"))
    term = spawn()
    term.prompt()
    # While the prompt was up, it wrote garbage at both starts, and was paused.
    wait_for_log(decoy_home, "mcp_server_down", after=1)

    term.send_line("hello")
    shown = clean(term.expect("all good", timeout=60))
    term.prompt()
    status = term.command("/mcp")
    out = clean(term.exit())

    assert "MCP server garbage is down" in shown
    assert "not JSON-RPC: 'notjson'); paused after 2 failures" in " ".join(status.split())
    for noise in LIBRARY_NOISE:
        assert noise not in term.raw, noise
    assert "agent --resume" in out


def test_repl_answers_and_lists_a_hanging_server_as_starting(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path
) -> None:
    _configure(decoy_home, {"hang": hanging_entry(start_timeout=NEVER)})
    fake_llm.script(Reply.text("answered"))
    term = spawn()
    term.prompt()

    term.send_line("hello")
    term.expect("answered", timeout=60)
    term.prompt()
    status = term.command("/mcp")
    term.exit()

    [request] = fake_llm.requests
    assert "MCP server 'hang' is not ready yet (still starting)" in _last_user_text(request)
    assert "hang" in status
    assert "starting" in status


def test_repl_offers_a_server_that_is_up_before_the_first_request_from_it_on(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path, tmp_path: Path
) -> None:
    _configure(decoy_home, {"fake": stdio_entry(tmp_path, start_timeout=NEVER)})
    fake_llm.script(Reply.tool_call("mcp__fake__echo", {"text": "up early"}), Reply.text("echoed"))
    term = spawn()
    term.prompt()
    wait_for_log(decoy_home, "mcp_server_ready")  # it came up while the prompt was idle

    term.send_line("echo it")
    term.expect("Allow\\?", timeout=60)  # an MCP tool asks, whatever its readOnlyHint says
    term.send_line("y")
    term.expect("echoed", timeout=60)
    term.prompt()
    term.exit()

    first, second = fake_llm.requests
    assert "mcp__fake__echo" in _tool_names(first)
    assert "MCP server" not in _last_user_text(first)  # nothing to tell: its tools are there
    assert "echo: up early" in json.dumps(second.body)
