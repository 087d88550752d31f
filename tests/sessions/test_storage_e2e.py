"""Through the real CLI: damaged sessions resume whole; storage failures are one sentence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.cli import AgentRun, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer

MODEL = "anthropic:claude-test"


def _agent(
    fake_llm: FakeLlmServer,
    workspace: Path,
    home: Path,
    *args: str,
    env: dict[str, str] | None = None,
    file_size_limit: int | None = None,
) -> AgentRun:
    return run_agent(
        *args,
        "--model",
        MODEL,
        server=fake_llm,
        workspace=workspace,
        home=home,
        env=env,
        file_size_limit=file_size_limit,
    )


def _first_session(fake_llm: FakeLlmServer, workspace: Path, home: Path) -> tuple[str, Path]:
    fake_llm.script(Reply.text("first answer"))
    run = _agent(fake_llm, workspace, home, "-p", "first prompt", "--output-format", "json")
    assert run.code == 0, run.stderr
    session_id = str(run.json()["session_id"])
    return session_id, home / ".agent" / "sessions" / f"{session_id}.jsonl"


def _assert_clean_failure(run: AgentRun, code: int, *phrases: str) -> str:
    assert run.code == code, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    error = str(run.json()["error"])
    assert "\n" not in error
    assert ". " not in error, f"more than one sentence: {error}"
    for phrase in phrases:
        assert phrase in error
    return error


def test_a_session_damaged_in_the_middle_resumes_with_every_valid_record(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    session_id, path = _first_session(fake_llm, workspace, decoy_home)
    fake_llm.script(Reply.text("second answer"))
    assert (
        _agent(fake_llm, workspace, decoy_home, "-p", "second prompt", "-r", session_id).code == 0
    )
    lines = path.read_bytes().split(b"\n")
    first_answer = next(i for i, line in enumerate(lines) if b"first answer" in line)
    lines.insert(first_answer, b'{"ts":"yesterday","type":"message"}')
    lines.insert(first_answer, b"\xff\xfe garbage \x00")
    path.write_bytes(b"\n".join(lines))

    fake_llm.script(Reply.text("third answer"))
    run = _agent(fake_llm, workspace, decoy_home, "-p", "third prompt", "--resume", session_id)

    assert run.code == 0, run.stderr
    assert "skipped 2 damaged lines" in run.stderr
    sent = json.dumps(fake_llm.requests[-1].body["messages"])
    for text in ("first prompt", "first answer", "second prompt", "second answer", "third prompt"):
        assert text in sent
    [aside] = path.parent.glob(f"{session_id}.jsonl.damaged-*")
    assert aside.read_bytes().count(b"\n") == 2
    listed = run_agent("sessions", server=fake_llm, workspace=workspace, home=decoy_home)
    assert listed.code == 0, listed.stderr
    assert session_id in listed.stdout


def _agent_home_is_a_file(home: Path, session_id: str, env: dict[str, str]) -> None:
    (home / "not-a-dir").write_text("x")
    env["AGENT_HOME"] = str(home / "not-a-dir")


def _lock_is_a_directory(home: Path, session_id: str, env: dict[str, str]) -> None:
    lock = home / ".agent" / "sessions" / f"{session_id}.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir()


def _session_is_a_symlink(home: Path, session_id: str, env: dict[str, str]) -> None:
    path = home / ".agent" / "sessions" / f"{session_id}.jsonl"
    outside = home / "outside.jsonl"
    path.rename(outside)
    path.symlink_to(outside)


def _garbage_base_url(home: Path, session_id: str, env: dict[str, str]) -> None:
    env["ANTHROPIC_BASE_URL"] = "::::not a url"


def _config_not_utf8(home: Path, session_id: str, env: dict[str, str]) -> None:
    config = home / ".config" / "agent" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b"model: \xff\xfe\n")


Breakage = Callable[[Path, str, dict[str, str]], None]
BREAKAGES: dict[str, tuple[Breakage, str]] = {
    "AGENT_HOME is a file": (_agent_home_is_a_file, "check AGENT_HOME"),
    "lock is a directory": (_lock_is_a_directory, "move that directory out of the way"),
    "session is a symlink": (_session_is_a_symlink, "refuses to follow"),
    "base URL is garbage": (_garbage_base_url, "ANTHROPIC_BASE_URL"),
    "config is not UTF-8": (_config_not_utf8, "not UTF-8"),
}


@pytest.mark.parametrize(("breakage", "phrase"), BREAKAGES.values(), ids=BREAKAGES.keys())
def test_a_storage_or_setup_failure_is_exit_2_with_one_sentence_and_json(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path, breakage: Breakage, phrase: str
) -> None:
    session_id, path = _first_session(fake_llm, workspace, decoy_home)
    before = path.read_bytes()
    env: dict[str, str] = {}
    breakage(decoy_home, session_id, env)

    run = _agent(
        fake_llm,
        workspace,
        decoy_home,
        *("-p", "go on", "--resume", session_id, "--output-format", "json"),
        env=env,
    )

    _assert_clean_failure(run, 2, phrase)
    assert run.json()["status"] == "error"
    assert (decoy_home / "outside.jsonl").exists() or path.read_bytes() == before
    if (decoy_home / "outside.jsonl").exists():
        assert (decoy_home / "outside.jsonl").read_bytes() == before


def test_when_every_write_fails_mid_turn_the_json_still_prints(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("an answer that cannot be saved"))
    run = _agent(
        fake_llm,
        workspace,
        decoy_home,
        *("-p", "hi", "--output-format", "json"),
        file_size_limit=400,  # the header fits; the turn's records do not
    )

    _assert_clean_failure(run, 1, "cannot save to session file", "free some disk space")
    assert run.json()["status"] == "failed"
    assert "Session saved" not in run.stderr
    assert "Session NOT saved in full" in run.stderr


def test_listing_sessions_under_an_agent_home_that_is_a_file_is_exit_2(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    (decoy_home / "not-a-dir").write_text("x")
    run = run_agent(
        "sessions",
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        env={"AGENT_HOME": str(decoy_home / "not-a-dir")},
    )
    assert run.code == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().startswith("agent: cannot list the sessions in")
    assert "check AGENT_HOME" in run.stderr
