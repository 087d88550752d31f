"""End to end: where nothing can succeed, ``agent -p`` stops soon, says why, and keeps the turn.

Every run ends with exit 1 (75 when the provider is unavailable, 130 for Ctrl-C), a message
on stderr, the resume hint, and a session whose conversation still ends on the prompt, so
``agent --resume`` answers it.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

from sessions import SessionStore
from tests.fakes.cli import MODELS
from tests.fakes.llm_script import Fault, Reply
from tests.fakes.llm_server import FakeLlmServer
from tests.recovery.test_e2e import (
    ANSWER,
    FALLBACKS,
    TimedRun,
    run_prompt,
    run_timed,
    wire_name,
    write_config,
)

PROMPT = "is the build green?"
RESUME_HINT = re.compile(r"Session saved\. Resume with: agent --resume (\S+)")


def assert_turn_kept(run: TimedRun, home: Path, ended: str = "failed") -> None:
    """The resume hint names a session that holds the unanswered prompt and how the turn ended."""
    found = RESUME_HINT.search(run.stderr)
    assert found, run.stderr
    loaded = SessionStore(home / ".agent").load(found.group(1))
    assert loaded.ends_with_user_message
    assert loaded.view[-1].text == PROMPT
    assert [record.status for record in loaded.turn_ends] == [ended]


def wait_for_event(home: Path, event_type: str, timeout: float = 15) -> None:
    """Wait until the session log (fsynced before the agent moves on) records ``event_type``."""
    deadline = time.monotonic() + timeout
    marker = f'"type":"{event_type}"'
    while not any(marker in path.read_text() for path in home.glob(".agent/sessions/*.jsonl")):
        assert time.monotonic() < deadline, f"no {event_type} event after {timeout}s"
        time.sleep(0.02)


def test_hard_outage_stops_after_bounded_requests_and_time(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    settings = write_config(
        workspace, max_attempts=4, base_backoff=0.2, max_backoff=0.4, max_total_wait=3
    )
    primary, fallback = MODELS["anthropic"], FALLBACKS["anthropic"]
    fake_llm.script(*[Fault.status(503)] * 30, model=wire_name(primary))
    fake_llm.script(*[Fault.status(529, "overloaded_error")] * 30, model=wire_name(fallback))

    run = run_prompt(fake_llm, workspace, decoy_home, primary, "--fallback-model", fallback)

    assert run.code == 75, run.stderr  # the provider is unavailable: try again later
    assert 2 <= len(fake_llm.requests) <= settings["max_attempts"] * 2
    waited = run.arrivals[-1] - run.arrivals[0]
    assert waited <= settings["max_total_wait"] + 1, f"kept retrying for {waited:.1f}s"
    assert "overloaded" in run.stderr
    assert primary in run.stderr
    assert fallback in run.stderr
    assert run.stdout == ""
    assert_turn_kept(run, decoy_home)


def test_invalid_request_fails_after_one_request(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace)
    primary, fallback = MODELS["openai"], FALLBACKS["openai"]
    # Square brackets, as real messages have, must reach the person as they were sent.
    message = "Invalid 'tools[0].function.parameters': expected [object]"
    fake_llm.script(Fault.status(400, "invalid_request_error", message=message), Reply.text(ANSWER))

    run = run_prompt(fake_llm, workspace, decoy_home, primary, "--fallback-model", fallback)

    assert run.code == 1, run.stderr
    assert [r.model for r in fake_llm.requests] == [wire_name(primary)]
    said = " ".join(run.stderr.split())  # the console wraps long lines
    assert f"[bad_request 400] openai:gpt-test: {message}" in said
    assert "rejected the request" in said
    assert_turn_kept(run, decoy_home)


def test_every_model_failing_lists_what_each_said(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace)
    primary, fallback = MODELS["anthropic"], FALLBACKS["openai"]
    fake_llm.script(
        Fault.status(401, "authentication_error", message="invalid x-api-key"),
        model=wire_name(primary),
    )
    quota = Fault.status(
        429, "insufficient_quota", code="insufficient_quota", message="exceeded your quota"
    )
    fake_llm.script(quota, model=wire_name(fallback))

    run = run_prompt(fake_llm, workspace, decoy_home, primary, "--fallback-model", fallback)

    assert run.code == 1, run.stderr
    assert len(fake_llm.requests) == 2
    assert fake_llm.remaining == 0
    said = " ".join(run.stderr.split())  # the console wraps long lines
    error = said[said.rindex("every model failed") : said.index("Session saved")]
    assert f"{primary}: [auth 401] invalid x-api-key" in error
    assert f"{fallback}: [quota 429] exceeded your quota" in error
    assert_turn_kept(run, decoy_home)


def test_ctrl_c_during_a_long_backoff_exits_at_once_with_130(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace, max_retry_wait=120, max_total_wait=120)
    fake_llm.script(
        Fault.status(429, "rate_limit_error", headers={"retry-after": "30"}), Reply.text(ANSWER)
    )
    interrupted_at: list[float] = []

    def interrupt(n: int, process: subprocess.Popen[str]) -> None:
        wait_for_event(decoy_home, "retry_scheduled")
        time.sleep(0.2)  # from announcing the wait to sleeping it
        interrupted_at.append(time.monotonic())
        process.send_signal(signal.SIGINT)

    run = run_timed(
        "-p",
        PROMPT,
        "--model",
        MODELS["anthropic"],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
        on_request=interrupt,
    )
    exited_after = time.monotonic() - interrupted_at[0]

    assert run.code == 130, run.stderr
    assert exited_after < 5, f"took {exited_after:.1f}s to stop after Ctrl-C"
    assert len(fake_llm.requests) == 1
    assert "retrying in 30s" in run.stderr
    assert_turn_kept(run, decoy_home, ended="interrupted")


def test_a_dead_server_is_one_retry_line_and_one_error_naming_the_model_once(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(
        workspace, max_attempts=6, base_backoff=0.1, probe_backoff=0.2, breaker_threshold=3
    )
    model = MODELS["anthropic"]
    fake_llm.script(*[Fault.drop()] * 6, model=wire_name(model))

    quiet = run_prompt(fake_llm, workspace, decoy_home, model)
    fake_llm.script(*[Fault.drop()] * 6, model=wire_name(model))
    verbose = run_prompt(fake_llm, workspace, decoy_home, model, "--verbose")

    assert quiet.code == 75, quiet.stderr
    lines = quiet.stderr.strip().splitlines()
    assert [line for line in lines if "retrying" in line] == [
        line for line in lines if "(attempt 2/6)" in line
    ]
    said = " ".join(quiet.stderr.split())
    assert said.count(model) == 1  # the error names it once; nothing else repeats it
    assert "skipping" not in said
    assert "Gave up" not in said
    assert "Is the server running?" in said
    assert_turn_kept(quiet, decoy_home)
    assert verbose.stderr.count("⏳") > 1  # --verbose keeps every retry
