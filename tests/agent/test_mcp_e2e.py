"""End to end: the real ``agent`` with real MCP servers (SDK-written) and the fake LLM server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes.cli import MODELS, agent_env, run_agent, write_person_config
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.mcp_harness import answer_once_ready, stdio_entry
from tests.fakes.terminal import Spawn, clean
from tools.guard.landlock import abi_version
from tools.guard.sandbox import namespaces_missing

TIMEOUT = 180


def _configure(home: Path, servers: dict[str, object]) -> None:
    write_person_config(home, yaml.safe_dump({"mcp_servers": servers}))


def _tool_names(body: dict[str, object]) -> set[str]:
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    return {str(tool.get("name")) for tool in tools}


def _server_changes(home: Path, session_id: str) -> list[dict[str, object]]:
    """The MCP server up/down events the session recorded, in order."""
    lines = (home / ".agent" / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return [
        record["event"]
        for record in records
        if record.get("type") == "event" and record["event"]["type"] == "mcp_server_changed"
    ]


def test_p_calls_an_mcp_tool_survives_a_crash_and_a_hang_and_resumes(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    _configure(decoy_home, {"fake": stdio_entry(tmp_path, call_timeout=3)})
    answer_once_ready(
        fake_llm,
        decoy_home,
        Reply.tool_call("mcp__fake__echo", {"text": "hi"}),
        Reply.tool_call("mcp__fake__count", {}),  # crashes the server mid-call
        Reply.tool_call("mcp__fake__hang", {}),  # hangs the restarted server
        Reply.text("Echoed; count and hang failed."),
    )
    common = ("--yes", "--output-format", "json", "--model", MODELS["anthropic"])

    first = run_agent(
        "-p", "use the tools", *common,
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT,
    )  # fmt: skip

    assert first.code == 0, first.stderr
    payload = first.json()
    assert payload["status"] == "done"
    requests = fake_llm.requests
    assert "mcp__fake__echo" in _tool_names(requests[1].body)
    assert "echo: hi" in json.dumps(requests[1].body)
    assert "not retried" in json.dumps(requests[2].body)
    assert "stopped answering" in json.dumps(requests[3].body)
    assert (tmp_path / "count_calls").read_text() == "called\n"
    changes = _server_changes(decoy_home, payload["session_id"])
    assert changes[0]["up"] is False, changes  # the crash, noticed by the next request
    assert changes[0]["server"] == "fake"
    assert any(change["up"] for change in changes[1:]), changes  # restarted for the hang call

    answer_once_ready(
        fake_llm, decoy_home, Reply.tool_call("mcp__fake__add", {"a": 2, "b": 40}), Reply.text("42")
    )
    resumed = run_agent(
        "-p", "add them", "--resume", payload["session_id"], *common,
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT,
    )  # fmt: skip

    assert resumed.code == 0, resumed.stderr
    assert resumed.json()["result"] == "42"
    last = json.dumps(fake_llm.requests[-1].body)
    assert '"42"' in last or "42" in last
    assert "echo: hi" in last  # the earlier MCP result is part of the resumed conversation


def test_a_server_that_never_starts_does_not_fail_the_turn(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    entry = stdio_entry(tmp_path, env={"FAKE_MCP_NEVER_START": "1"}, start_timeout=20)
    _configure(decoy_home, {"broken": entry})
    fake_llm.script(Reply.text("Done without it."))

    run = run_agent(
        "-p", "hello", "--model", MODELS["anthropic"],
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert "Done without it." in run.stdout
    assert not any(name.startswith("mcp__") for name in _tool_names(fake_llm.requests[0].body))


def test_project_servers_start_only_once_the_person_allows_them(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": stdio_entry(tmp_path)}})
    )
    fake_llm.script(Reply.text("no tools yet"))
    args = ("--model", MODELS["anthropic"])

    before = run_agent("-p", "hello", *args, server=fake_llm, workspace=workspace, home=decoy_home)
    listed = run_agent(
        "mcp", "list", server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT
    )
    approved = run_agent(
        "mcp", "approve", "proj", server=fake_llm, workspace=workspace, home=decoy_home
    )
    listed_after = run_agent(
        "mcp", "list", "--wait", "120",
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT,
    )  # fmt: skip

    assert before.code == 0, before.stderr
    assert "not allowed yet" in before.stderr or "not started" in before.stderr
    assert not any(name.startswith("mcp__") for name in _tool_names(fake_llm.requests[0].body))
    assert "proj" in listed.stdout
    assert "not allowed yet" in listed.stdout
    assert approved.code == 0, approved.stderr
    assert "ready, 12 tools" in listed_after.stdout, listed_after.stdout


def test_repl_asks_about_a_project_server_and_mcp_shows_its_state(
    spawn: Spawn, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": stdio_entry(tmp_path)}})
    )
    answer_once_ready(
        fake_llm,
        decoy_home,
        Reply.tool_call("mcp__proj__echo", {"text": "from the repl"}),
        Reply.text("ok"),
    )
    term = spawn("--yes")

    term.expect("Allow it")
    term.send_line("y")
    term.prompt()
    term.send_line("echo something")
    shown = clean(term.expect("ok", timeout=120))
    term.prompt()
    status = term.command("/mcp")

    assert "mcp__proj__echo" in shown
    assert "from the repl" in json.dumps(fake_llm.requests[-1].body)
    assert "proj" in status
    assert "ready, 12 tools" in status
    out = clean(term.exit())
    assert "agent --resume" in out


def test_clear_and_resume_keep_the_servers_running(
    spawn: Spawn, fake_llm: FakeLlmServer, decoy_home: Path, tmp_path: Path
) -> None:
    _configure(decoy_home, {"srv": stdio_entry(tmp_path)})
    fake_llm.script(Reply.text("first"), Reply.tool_call("mcp__srv__echo", {"text": "again"}))
    fake_llm.script(Reply.text("done"))
    term = spawn()
    term.prompt()
    term.send_line("hello")
    term.expect("first", timeout=120)
    term.prompt()
    first_session = term.command("/sessions")

    cleared = term.command("/clear", timeout=60)
    term.send_line("echo it")
    asked = clean(term.expect("Allow\\?", timeout=120))  # a server's readOnlyHint asks too
    term.send_line("y")
    shown = asked + clean(term.expect("done", timeout=120))
    term.prompt()
    resumed = term.command(f"/resume {_first_id(first_session)}", timeout=60)
    status = term.command("/mcp")
    out = clean(term.exit())

    [_] = (tmp_path / "starts").read_text().split()  # started once, for all three sessions
    assert "New session" in cleared
    assert "Resumed" in resumed
    assert "mcp__srv__echo" in shown
    assert "echo: again" in json.dumps(fake_llm.requests[-1].body)
    assert "ready, 12 tools" in status
    assert "agent --resume" in out
    # And stopped when the REPL ended. The pid it wrote is its own PID namespace's number, so
    # it is found by its environment, as seen from outside any sandbox.
    deadline = time.monotonic() + 10
    while _servers_alive(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _servers_alive(tmp_path)


def _servers_alive(state: Path) -> list[int]:
    """Live processes of the fake MCP server whose state directory is ``state``."""
    marker = f"FAKE_MCP_STATE={state}".encode()
    found = []
    for entry in os.listdir("/proc"):
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if entry.isdigit() and marker in environ.split(b"\0"):
            found.append(int(entry))
    return found


def _first_id(listing: str) -> str:
    match = re.search(r"\b([0-9a-z]{26})\b", listing)
    assert match is not None, listing
    return match.group(1)[:8]


def test_nothing_mcp_is_imported_without_servers(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    check = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from agent.app import build_agent\n"
        "from agent.setup.startup import Options, load, secret_redactor\n"
        "from agent.terminal.ui import ConsoleUI\n"
        "from rich.console import Console\n"
        "opts, env = Options(workspace=Path.cwd()), dict(os.environ)\n"
        "ui = ConsoleUI(Console())\n"
        "config = load(opts, env)\n"
        "redact = secret_redactor(config, env)\n"
        "build_agent(config, opts, face=ui, approver=None, environ=env, redactor=redact).close()\n"
        "names = ('mcp', 'anyio', 'tools.mcp.runtime')\n"
        "print(sorted(m for m in names if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", check],
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.stdout.strip() == "[]", run.stderr


def test_a_server_cannot_read_what_a_read_rule_denies(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    missing = namespaces_missing()
    if abi_version() < 1 or missing:
        pytest.skip(f"no namespaces here ({missing or 'no Landlock'}): nothing masks the file")
    (workspace / ".env").write_text("TOKEN=sk-live-hunter2\n")
    server = stdio_entry(tmp_path, env={"FAKE_MCP_COPY": ".env"})
    write_person_config(
        decoy_home,
        yaml.safe_dump({"mcp_servers": {"fake": server}, "permissions": {"deny": ["Read(.env)"]}}),
    )
    answer_once_ready(fake_llm, decoy_home, Reply.text("done"))

    run = run_agent(
        "-p", "hello", "--model", MODELS["anthropic"],
        server=fake_llm, workspace=workspace, home=decoy_home, timeout=TIMEOUT,
    )  # fmt: skip

    assert run.code == 0, run.stderr
    assert (tmp_path / "copied").read_text() == "read: ''"  # an empty file masks it
    assert (workspace / ".env").read_text() == "TOKEN=sk-live-hunter2\n"
