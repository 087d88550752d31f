"""Crash safety end to end: ``agent -p`` is SIGKILLed at many points, then resumed.

The real CLI runs against the fake LLM server. Whatever the kill interrupted — a stream, a
tool, an append — every record on disk before the kill survives the resume, the file loads,
the repaired history is valid for both providers, and the resumed turn completes.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from sessions import SessionStore, history_problems
from tests.fakes.cli import MODELS, Protocol, agent_command, agent_env, run_agent
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer

# ("lines", n): kill once the session file holds n complete lines (header included), which
# lands between appends. ("requests", n): kill 0.3 s after the n-th model request arrives —
# inside the 0.5 s command of request 2's tool call, or in the stalled stream of request 4.
KILL_POINTS = [
    ("lines", 1),
    ("lines", 2),
    ("lines", 3),
    ("lines", 6),
    ("requests", 2),
    ("requests", 4),
]


def _script_task(server: FakeLlmServer) -> None:
    server.script(
        Reply.tool_call("write_file", {"path": "notes.txt", "content": "one\n"}),
        Reply.tool_call("run_command", {"command": "sleep 0.5; echo slow"}),
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Fault.stall(30, after_events=2, reply=Reply.text("All done.")),
    )


def _complete_lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1] if path.exists() else []


def _kill_when(
    process: subprocess.Popen[bytes], server: FakeLlmServer, sessions: Path, point: tuple[str, int]
) -> list[bytes]:
    """SIGKILL ``process`` at ``point``; return the complete lines of its session file then."""
    kind, count = point
    deadline = time.monotonic() + 30
    path: Path | None = None
    while time.monotonic() < deadline and process.poll() is None:
        found = sorted(sessions.glob("*.jsonl")) if sessions.is_dir() else []
        path = found[0] if found else None
        if kind == "requests" and len(server.requests) >= count:
            time.sleep(0.3)
            break
        if kind == "lines" and path is not None and len(_complete_lines(path)) >= count:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    _, stderr = process.communicate()
    assert path is not None, f"the agent never created a session file: {stderr.decode()}"
    return _complete_lines(path)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_killed_session_resumes_without_losing_acknowledged_records(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    sessions = decoy_home / ".agent" / "sessions"
    for point in KILL_POINTS:
        _script_task(fake_llm)
        process = subprocess.Popen(
            agent_command("-p", "write notes", "--yes", "--model", MODELS[protocol]),
            cwd=workspace,
            env=agent_env(fake_llm, decoy_home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        on_disk = _kill_when(process, fake_llm, sessions, point)
        fake_llm.reset()
        store = SessionStore(decoy_home / ".agent")
        session_id = store.list()[0].id
        store.load(session_id)  # loads after the kill, torn tail or not

        # Two answers: one for a prompt the kill left unanswered, one for "carry on".
        fake_llm.script(Reply.text("Carried on."), Reply.text("Carried on."))
        run = run_agent(
            "-p",
            "carry on",
            "--yes",
            "--resume",
            session_id,
            "--model",
            MODELS[protocol],
            server=fake_llm,
            workspace=workspace,
            home=decoy_home,
        )

        where = f"killed at {point} ({protocol})"
        assert run.code == 0, f"{where}: {run.stderr}"
        after = _complete_lines(sessions / f"{session_id}.jsonl")
        assert after[: len(on_disk)] == on_disk, f"{where}: a record on disk was lost"
        loaded = store.load(session_id)
        assert loaded.warnings == [], where
        assert history_problems(loaded.view) == [], where
        assert loaded.view[-1].text == "Carried on.", where
        assert loaded.turn_ends[-1].status == "done", where
        fake_llm.reset()
        for path in sessions.iterdir():
            path.unlink()
