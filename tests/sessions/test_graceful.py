"""Every bad ending of ``agent -p`` leaves a consistent session and says how to resume."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from sessions import SessionStore, history_problems
from tests.fakes.cli import agent_command, agent_env, run_agent, wait_for_descendant
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_during_a_tool_call_saves_the_session(
    sig: signal.Signals, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(
        Reply.tool_call("run_command", {"command": "sleep 30"}),
        Reply.text("Going on."),  # the interrupted turn and "go on" in one request
    )
    proc = subprocess.Popen(
        agent_command("-p", "wait a while", "--yes", "--model", "anthropic:claude-test"),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_descendant(proc.pid, ["sleep", "30"])  # the command is running
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=15)

    assert proc.returncode == (143 if sig == signal.SIGTERM else 130), stderr
    assert "Session saved. Resume with: agent --resume" in stderr
    store = SessionStore(decoy_home / ".agent")
    [summary] = store.list()
    loaded = store.load(summary.id)
    assert history_problems(loaded.view) == []
    assert loaded.turn_ends[-1].status == "interrupted"
    assert loaded.view[-1].tool_results[0].is_error  # the interrupted call is answered

    resumed = run_agent(
        "-p",
        "go on",
        "--resume",
        summary.id[:8],
        "--model",
        "anthropic:claude-test",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert resumed.code == 0, resumed.stderr
    assert "Going on." in resumed.stdout
    assert len(fake_llm.requests) == 2


def test_a_second_process_on_the_same_session_is_refused(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("first"), Fault.hang(30))
    first = run_agent(
        "-p",
        "hi",
        "--output-format",
        "json",
        "--model",
        "anthropic:claude-test",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    session_id = first.json()["session_id"]
    holder = subprocess.Popen(
        agent_command("-p", "again", "--resume", session_id, "--model", "anthropic:claude-test"),
        cwd=workspace,
        env=agent_env(fake_llm, decoy_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(fake_llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        second = run_agent(
            "-p",
            "me too",
            "--resume",
            session_id,
            server=fake_llm,
            workspace=workspace,
            home=decoy_home,
        )
        assert second.code == 2
        assert "open in another agent process" in second.stderr
    finally:
        holder.kill()
        holder.communicate(timeout=10)
