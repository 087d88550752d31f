"""``agent -p`` ends with an immediate exit: nothing printed, logged or saved may be lost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import MODELS, Protocol, agent_command, agent_env, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

LONG_ANSWER = "".join(f"line {n:06d} of a long answer\n" for n in range(8_000))  # ~220 KB


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_long_answer_its_log_and_its_session_are_complete_after_the_exit(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text(LONG_ANSWER), Reply.text("Again."))
    args = ("--model", MODELS[protocol])

    run = run_agent("-p", "go", *args, server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 0, run.stderr
    assert run.stdout.rstrip("\n") == LONG_ANSWER.rstrip("\n")  # a pipe: printed at the end
    logs = "".join(p.read_text() for p in (decoy_home / ".agent" / "logs").iterdir())
    ended = [json.loads(line) for line in logs.splitlines() if '"turn_ended"' in line]
    assert [entry["status"] for entry in ended] == ["done"]
    store = SessionStore(decoy_home / ".agent")
    session_id = store.list()[0].id
    assert store.load(session_id).turn_ends[-1].status == "done"

    # The lock was released and the file closed whole: the session resumes at once.
    again = run_agent(
        "-p",
        "more",
        "--resume",
        session_id,
        "--output-format",
        "json",
        *args,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert again.code == 0, again.stderr
    assert again.json()["result"] == "Again."


def test_a_reader_that_stops_early_gets_no_traceback(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    """``agent -p ... | head -1``: the pipe closes before the answer is written."""
    fake_llm.script(Reply.text(LONG_ANSWER))
    env = agent_env(fake_llm, decoy_home)
    agent = subprocess.Popen(
        agent_command("-p", "go", "--model", MODELS["anthropic"]),
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert agent.stdout is not None
    assert agent.stderr is not None
    agent.stdout.readline()
    agent.stdout.close()  # the reader is gone, as `head -1` leaves
    stderr = agent.stderr.read().decode()
    agent.wait(timeout=60)

    assert stderr == ""
    store = SessionStore(decoy_home / ".agent")
    assert store.load(store.list()[0].id).turn_ends[-1].status == "done"
