"""``-p --resume ID`` from another directory says that the session works here now: on
stderr, as the REPL says it, as a field of ``--output-format json`` and as a ``system``
line of stream-json."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.cli import MODELS, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

MODEL = ("--model", MODELS["anthropic"])


def test_p_resume_from_another_directory_says_where_the_session_works_now(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(*(Reply.text(f"Answer {n}.") for n in range(5)))
    first = run_agent(
        "-p", "hello", "--output-format", "json", *MODEL,
        server=fake_llm, workspace=workspace, home=decoy_home,
    )  # fmt: skip
    session = first.json()["session_id"]
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()

    def resume(where: Path, *output: str) -> tuple[str, str]:
        run = run_agent(
            "-p", "more", "--resume", session, *output, *MODEL,
            server=fake_llm, workspace=where, home=decoy_home,
        )  # fmt: skip
        assert run.code == 0, run.stderr
        return run.stdout, " ".join(run.stderr.split())

    said = f"This session was started in {workspace}; it works in {elsewhere} now"
    _, text_err = resume(elsewhere)
    json_out, json_err = resume(elsewhere, "--output-format", "json")
    stream_out, stream_err = resume(elsewhere, "--output-format", "stream-json", "--verbose")
    _, at_home = resume(workspace)

    assert f"! {said}" in text_err
    assert said in json_err
    assert f"! {said}" in stream_err
    result = json.loads(json_out)
    moved = {"started_in": str(workspace), "cwd": str(elsewhere)}
    assert result["workspace_moved"] == moved
    assert [e for e in result["events"] if e["type"] == "workspace_moved"] == [
        {"type": "workspace_moved", "started_in": str(workspace), "workspace": str(elsewhere)}
    ]
    lines = [json.loads(line) for line in stream_out.splitlines()]
    assert lines[0]["subtype"] == "init"
    [system] = [line for line in lines if line.get("subtype") == "workspace_moved"]
    assert system["type"] == "system"
    assert {key: system[key] for key in moved} == moved
    assert said in system["message"]
    assert system["session_id"] == session
    assert "This session was started in" not in at_home  # back home: nothing to say
