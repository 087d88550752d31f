"""``agent -p`` ends with an immediate exit: nothing printed, logged or saved may be lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import MODELS, Protocol, run_agent
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
