"""Resuming through the real CLI: changed files are told to the model; secrets never persist."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from tests.fakes.cli import NO_KEYS, AgentRun, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

MODEL = "anthropic:claude-test"


def test_files_changed_since_the_session_are_told_to_the_model(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (workspace / "notes.txt").write_text("v1\n")
    fake_llm.script(Reply.tool_call("read_file", {"path": "notes.txt"}), Reply.text("It says v1."))
    first = run_agent(
        "-p",
        "read notes.txt",
        "--output-format",
        "json",
        "--model",
        MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    session_id = first.json()["session_id"]
    (workspace / "notes.txt").write_text("v2, edited by hand\n")

    fake_llm.script(Reply.text("Noted."))
    resumed = run_agent(
        "-p",
        "and now?",
        "--resume",
        session_id,
        "--model",
        MODEL,
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert resumed.code == 0, resumed.stderr
    assert "notes.txt" in resumed.stderr  # the person is told too
    last_request = fake_llm.requests[-1].body
    prompt = json.dumps(last_request["messages"][-1])
    assert "notes.txt" in prompt
    assert "and now?" in prompt
    roles = [m["role"] for m in last_request["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_api_keys_never_reach_the_session_or_the_logs(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    key = "sk-ant-test-key-0123456789"  # what tests.fakes.cli puts in the environment
    fake_llm.script(Reply.text(f"The key you gave me is {key}."))
    run = run_agent(
        "-p",
        f"remember {key}",
        "--model",
        MODEL,
        "--verbose",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )
    assert run.code == 0, run.stderr

    stored = [p.read_text() for p in (decoy_home / ".agent").rglob("*") if p.is_file()]
    assert stored
    assert not any(key in text for text in stored)
    assert any("[redacted" in text for text in stored)


def _saved_session(home: Path, cwd: Path, model: str, *, switched_to: str | None = None) -> str:
    """The id of a session saved in ``cwd`` with the model chain ``[model]``."""
    from sessions import SessionStore

    writer = SessionStore(home / ".agent").create(cwd=cwd, model_chain=[model])
    if switched_to is not None:
        writer.append_model_switch(switched_to, sticky=True, reason="/model")
    writer.close()
    return writer.id


def _resume(
    session_id: str, fake_llm: FakeLlmServer, workspace: Path, home: Path, **options: Any
) -> AgentRun:
    """``agent -p hi --resume ID --model MODEL`` run in ``workspace``."""
    return run_agent(
        "-p",
        "hi",
        "--resume",
        session_id,
        "--model",
        MODEL,  # chosen, so the offline model never stands in
        server=fake_llm,
        workspace=workspace,
        home=home,
        **options,
    )


def test_a_model_switched_to_outside_the_chain_is_restored_on_resume(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    session_id = _saved_session(decoy_home, workspace, MODEL, switched_to="openai:gpt-test")
    fake_llm.script(Reply.text("From the switched model."))

    run = _resume(session_id, fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    assert [(r.protocol, r.model) for r in fake_llm.requests] == [("openai", "gpt-test")]


def test_a_session_whose_provider_is_not_configured_here_resumes_on_this_model(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    # Started where ./agent.yaml defined `mylab`, resumed from `workspace`, which does not.
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    session_id = _saved_session(decoy_home, elsewhere, "mylab:default")
    fake_llm.script(Reply.text("Answered here."))

    run = _resume(session_id, fake_llm, workspace, decoy_home)

    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    said = " ".join(run.stderr.split())
    assert "No provider named 'mylab' is configured here" in said
    assert f"started in {elsewhere}" in said
    assert f"Continuing with {MODEL}" in said
    assert "Answered here." in run.stdout


def test_with_no_usable_model_here_the_error_names_the_sessions_model(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    session_id = _saved_session(decoy_home, elsewhere, "openai:gpt-test")

    run = _resume(session_id, fake_llm, workspace, decoy_home, env=NO_KEYS)

    assert run.code == 2, run.stderr
    assert "Traceback" not in run.stderr
    said = " ".join(run.stderr.split())
    assert "No API key" in said
    assert f"The session being resumed used openai:gpt-test, started in {elsewhere}." in said
    assert fake_llm.requests == []


def test_sessions_table_shows_prompts_verbatim(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    prompt = "explain [b]this[/i] markup"
    fake_llm.script(Reply.text("ok"))
    run_agent("-p", prompt, "--model", MODEL, server=fake_llm, workspace=workspace, home=decoy_home)

    listing = run_agent("sessions", server=fake_llm, workspace=workspace, home=decoy_home)

    assert listing.code == 0, listing.stderr
    header, row = listing.stdout.splitlines()
    assert header.split("\t")[0] == "id"
    assert row.split("\t")[3] == prompt
