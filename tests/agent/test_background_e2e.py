"""Background commands through the real ``agent -p`` and the fake model server: a server that
keeps running across steps, and nothing left running however the agent ends.

Every command runs in the decoy workspace with a decoy HOME; the processes are found in the
process table by an argument no other process has.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import agent_command, agent_env, run_agent, wait_for_descendant
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.tools.test_run_command import running, wait_until_gone

MODEL = ("--model", "anthropic:claude-test")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _results(server: FakeLlmServer) -> list[str]:
    """The text of every tool result the model was sent, in order, once each."""
    seen: dict[str, str] = {}
    for request in server.requests:
        for message in request.body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    seen.setdefault(block["tool_use_id"], json.dumps(block.get("content")))
    return list(seen.values())


def _fetch(port: int, path: str) -> str:
    """A foreground command that asks the server for ``path`` once it is up."""
    script = (  # a 404 is the server's answer; a refused connection is tried again
        f"import urllib.request as u, urllib.error as e\n"
        f"try: u.urlopen('http://127.0.0.1:{port}{path}')\n"
        "except e.HTTPError as error: print(error)"
    )
    return f'for i in $(seq 100); do python3 -c "{script}" && break; sleep 0.1; done'


def test_a_server_keeps_running_across_steps_and_reads_return_only_new_output(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    port = _free_port()
    serve = f"python3 -u -m http.server {port} --bind 127.0.0.1"
    fake_llm.script(
        Reply.tool_call("run_command", {"command": serve, "run_in_background": True}),
        Reply.tool_call("run_command", {"command": _fetch(port, "/first-page")}),
        Reply.tool_call("command_output", {"shell_id": "bash_1", "filter": "GET"}),
        Reply.tool_call("run_command", {"command": _fetch(port, "/second-page")}),
        Reply.tool_call("command_output", {"shell_id": "bash_1"}),
        Reply.tool_call("kill_command", {"shell_id": "bash_1"}),
        Reply.text("Served and stopped."),
    )
    run = run_agent(
        "-p", "serve", "--yes", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )
    assert run.code == 0, run.stderr
    assert "Served and stopped." in run.stdout
    started, _, first, _, second, killed = _results(fake_llm)
    assert "Started in the background as bash_1" in started
    assert "GET /first-page" in first
    assert "File not found" not in first  # the filter's
    assert "bash_1: running" in first
    assert "GET /second-page" in second
    assert "first-page" not in second  # only what came since the last read
    assert "stopped by kill_command" in killed
    assert wait_until_gone(f"http.server {port}") == []


def test_nothing_is_left_running_after_the_run_ends_and_the_session_has_the_ends(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "sleep 300.61", "run_in_background": True}),
        Reply.text("Left it running."),
    )
    run = run_agent(
        "-p", "start", "--yes", *MODEL, server=fake_llm, workspace=workspace, home=decoy_home
    )
    assert run.code == 0, run.stderr
    assert wait_until_gone("sleep 300.61") == []
    [summary] = SessionStore(decoy_home / ".agent").list()
    events = SessionStore(decoy_home / ".agent").load(summary.id).events
    kinds = [(e["type"], e.get("shell_id")) for e in events if "shell_id" in e]
    assert kinds == [("background_started", "bash_1"), ("background_ended", "bash_1")]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_background_commands_too(
    sig: signal.Signals, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    marker = f"sleep 300.{62 + int(sig)}"
    fake_llm.script(
        Reply.tool_call("run_command", {"command": marker, "run_in_background": True}),
        Reply.tool_call("run_command", {"command": "sleep 30"}),
        Reply.text("Never."),
    )
    proc = subprocess.Popen(
        agent_command("-p", "work", "--yes", *MODEL),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_descendant(proc.pid, ["sleep", "30"])
    assert running(marker)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), stderr
    assert wait_until_gone(marker) == []


def test_a_resumed_session_is_told_which_commands_the_restart_lost(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "sleep 300.71", "run_in_background": True}),
        Fault.hang(60),
    )
    proc = subprocess.Popen(
        agent_command("-p", "work", "--yes", *MODEL),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_descendant(proc.pid, ["sleep", "300.71"])
        deadline = time.monotonic() + 30
        while len(fake_llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the step after the start is under way
        proc.kill()  # no chance to record the command's end
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert wait_until_gone("sleep 300.71") == []  # the launcher follows its agent
    fake_llm.reset()
    fake_llm.script(Reply.text("Starting it again."))
    [summary] = SessionStore(decoy_home / ".agent").list()
    run = run_agent(
        "-p",
        "go on",
        "--resume",
        summary.id,
        *MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr
    sent = json.dumps(fake_llm.requests[0].body["messages"])
    assert "lost when the agent restarted: bash_1 (`sleep 300.71`)" in sent
