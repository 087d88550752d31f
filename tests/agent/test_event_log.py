"""Events in the log file: every one at INFO; a tool starting (one a call) only with
``--verbose``. The session keeps the start of a tool that can change something."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer


@pytest.mark.parametrize("verbose", [False, True])
def test_a_tool_start_is_logged_only_with_verbose_and_saved_when_it_can_change_something(
    verbose: bool, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.txt").write_text("v1\n")
    fake_llm.script(
        Reply.tool_call("read_file", {"path": "notes.txt"}),
        Reply.tool_call("write_file", {"path": "notes.txt", "content": "v2\n"}),
        Reply.text("It said v1; now v2."),
    )

    run = run_agent(
        "-p",
        "read notes.txt, then make it v2",
        "--yes",
        *(["--verbose"] if verbose else []),
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    logs = "".join(p.read_text() for p in (decoy_home / ".agent" / "logs").iterdir())
    logged = [entry["type"] for entry in map(json.loads, logs.splitlines()) if "type" in entry]
    assert "turn_ended" in logged
    assert ("tool_started" in logged) is verbose
    store = SessionStore(decoy_home / ".agent")
    saved = store.load(store.list()[0].id).events
    # A kill during the write leaves the question whether it began; a read's start, none.
    assert [event["tool"] for event in saved if event["type"] == "tool_started"] == ["write_file"]
    assert (workspace / "notes.txt").read_text() == "v2\n"
