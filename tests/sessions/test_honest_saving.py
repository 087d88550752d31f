"""With the disk full, the person is told what was not saved and how to recover; "Session
saved" is never printed then (issue 27). RLIMIT_FSIZE makes the agent's writes fail with
EFBIG, as a full disk fails with ENOSPC."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect

from tests.fakes.cli import MODELS, agent_command, agent_env, run_agent
from tests.fakes.llm_script import Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.terminal import TERMINAL_ENV, Terminal, clean

HEADER_ONLY = 400
"""Bytes: the session's header fits, the turn's records do not."""


def _p(fake_llm: FakeLlmServer, workspace: Path, home: Path, *args: str) -> tuple[int, str, str]:
    fake_llm.script(Reply.text("an answer that cannot be saved"))
    run = run_agent(
        *("-p", "hi", "--model", MODELS["anthropic"], *args),
        server=fake_llm,
        workspace=workspace,
        home=home,
        file_size_limit=HEADER_ONLY,
    )
    return run.code, run.stdout, run.stderr


def _session_file(home: Path) -> Path:
    (path,) = (home / ".agent" / "sessions").glob("*.jsonl")
    return path


def test_p_says_what_was_not_saved_and_how_to_resume(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    code, _, stderr = _p(fake_llm, workspace, decoy_home)

    assert code == 1
    assert "Session saved" not in stderr
    assert "Session NOT saved in full" in stderr
    assert "free some disk space" in stderr
    assert str(_session_file(decoy_home)) in stderr
    assert f"agent --resume {_session_file(decoy_home).stem}" in stderr


def test_stream_json_says_session_not_saved(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    _, stdout, stderr = _p(fake_llm, workspace, decoy_home, "--output-format", "stream-json")

    subtypes = [json.loads(line).get("subtype") for line in stdout.splitlines() if line]
    assert "session_not_saved" in subtypes
    assert "session_saved" not in subtypes
    assert "Session saved" not in stderr
    assert "Session NOT saved in full" in stderr


def test_the_repl_never_says_saved_when_it_was_not(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("an answer that cannot be saved"))
    argv = agent_command("--model", MODELS["anthropic"])
    # ulimit -f counts 1024-byte blocks in sh; Python ignores SIGXFSZ, so writes fail instead.
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", 'ulimit -f 1 && exec "$@"', "sh", *argv],
        cwd=str(workspace),
        env=agent_env(fake_llm, decoy_home, TERMINAL_ENV),
        dimensions=(40, 100),
        encoding="utf-8",
        codec_errors="replace",
    )
    try:
        term = Terminal(child)
        term.prompt(timeout=30)
        shown = term.command("hi", timeout=30)
        assert "cannot save to session file" in shown
        ended = clean(term.exit())
    finally:
        if child.isalive():
            child.kill(9)
    assert "Session saved" not in ended
    assert "Session NOT saved in full" in ended.replace("\n", "")
