"""A turn stopped midway (Ctrl-C, ``kill -9``) resumes as ONE turn, for both protocols.

The real CLI runs against the fake LLM server. After the stop, ``agent -p "<prompt>" --resume
ID --output-format json`` sends one request holding the repaired turn and the new prompt; the
answer to it is the JSON ``result``; every request is valid for the vendor. Commands run are
harmless (``sleep 30``) and HOME / AGENT_HOME are decoys in temporary directories.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sessions import SessionStore
from tests.fakes.cli import MODELS, PrintRun, Protocol, agent_command, agent_env, run_agent
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer
from tests.fakes.vendor_rules import request_problems

NEW_PROMPT = "Continue the task."
ANSWER = "Resumed: the slow step was interrupted, so I checked and finished it."


def _session_file(home: Path) -> Path | None:
    found = sorted((home / ".agent" / "sessions").glob("*.jsonl"))
    return found[0] if found else None


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _tool_running(home: Path) -> Callable[[], bool]:
    # The loop saves the reply holding the call before it runs the tool.
    def check() -> bool:
        path = _session_file(home)
        return path is not None and '"tool_use"' in path.read_text()

    return check


def _start(server: FakeLlmServer, workspace: Path, home: Path, model: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        agent_command("-p", "run the slow step", "--yes", "--model", model),
        cwd=workspace,
        env=agent_env(server, home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


SLOW_TOOL: list[Step] = [Reply.tool_call("run_command", {"command": "sleep 30"})]
STALLED_STREAM: list[Step] = [Fault.stall(30, after_events=2, reply=Reply.text("Working on it"))]

# (script of the first run, when to stop it, the signal)
SCENARIOS = {
    "SIGINT during a tool": (SLOW_TOOL, "tool", signal.SIGINT),
    "kill -9 during a tool": (SLOW_TOOL, "tool", signal.SIGKILL),
    "kill -9 mid-stream": (STALLED_STREAM, "stream", signal.SIGKILL),
}


def _stop_midway(
    server: FakeLlmServer, workspace: Path, home: Path, protocol: Protocol, scenario: str
) -> str:
    """Run the first turn, stop it as ``scenario`` says; return the session id."""
    script, point, sig = SCENARIOS[scenario]
    server.script(*script)
    process = _start(server, workspace, home, MODELS[protocol])
    try:
        if point == "tool":
            _wait_for(_tool_running(home), "the tool call to start")
            time.sleep(0.5)
        else:
            _wait_for(lambda: len(server.requests) >= 1, "the first request")
            time.sleep(0.5)  # the stream has started and stalls
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    expected = 130 if sig == signal.SIGINT else -signal.SIGKILL
    assert process.returncode == expected, stderr
    for request in server.requests:
        assert request_problems(protocol, request.body) == []
    [summary] = SessionStore(home / ".agent").list()
    return summary.id


def _last_user_message(protocol: Protocol, body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list)
    return json.dumps(messages[-1] if protocol == "anthropic" else messages[-2:])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_turn_stopped_midway_resumes_as_one_turn(
    scenario: str,
    protocol: Protocol,
    fake_llm: FakeLlmServer,
    workspace: Path,
    decoy_home: Path,
    print_run: PrintRun,
) -> None:
    session_id = _stop_midway(fake_llm, workspace, decoy_home, protocol, scenario)
    fake_llm.reset()
    fake_llm.script(Reply.text(ANSWER))

    run = print_run(
        NEW_PROMPT,
        "--resume",
        session_id,
        "--output-format",
        "json",
        "--yes",
        model=MODELS[protocol],
    )

    assert run.code == 0, run.stderr
    output = run.json()
    assert output["result"] == ANSWER
    assert output["status"] == "done"
    [request] = fake_llm.requests  # one model request for the resumed turn
    assert request_problems(protocol, request.body) == []
    sent = json.dumps(request.body["messages"])
    assert "run the slow step" in sent
    last = _last_user_message(protocol, request.body)
    assert NEW_PROMPT in last
    if SCENARIOS[scenario][1] == "tool":
        assert "was interrupted" in last  # the call's result, then the prompt, in one message
        assert last.index("was interrupted") < last.index(NEW_PROMPT)
    loaded = SessionStore(decoy_home / ".agent").load(session_id)
    assert loaded.view[-1].text == ANSWER
    assert [end.status for end in loaded.turn_ends][-1] == "done"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["no prompt", "empty stdin"])
def test_resume_without_a_prompt_continues_the_stopped_turn(
    how: str, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    session_id = _stop_midway(fake_llm, workspace, decoy_home, "openai", "kill -9 mid-stream")
    fake_llm.reset()
    fake_llm.script(Reply.text(ANSWER))
    prompt = ["-p"] if how == "no prompt" else ["-p", "-"]

    run = run_agent(
        *prompt,
        "--resume",
        session_id,
        "--output-format",
        "json",
        "--model",
        MODELS["openai"],
        server=fake_llm,
        workspace=workspace,
        home=decoy_home,
    )

    assert run.code == 0, run.stderr
    assert run.json()["result"] == ANSWER
    [request] = fake_llm.requests
    assert request_problems("openai", request.body) == []
    assert request.body["messages"][-1] == {"role": "user", "content": "run the slow step"}


def test_resume_without_a_prompt_of_a_finished_session_says_what_to_do(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    fake_llm.script(Reply.text("Done."))
    first = run_agent(
        "-p", "hi", "--output-format", "json", server=fake_llm, workspace=workspace, home=decoy_home
    )
    session_id = first.json()["session_id"]

    run = run_agent(
        "-p", "--resume", session_id, server=fake_llm, workspace=workspace, home=decoy_home
    )

    assert run.code == 2
    assert "nothing to continue" in run.stderr
    assert f'agent -p "..." --resume {session_id}' in run.stderr
    assert len(fake_llm.requests) == 1


def test_an_empty_prompt_without_resume_is_a_usage_error(
    fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    run = run_agent("-p", "-", server=fake_llm, workspace=workspace, home=decoy_home)

    assert run.code == 2
    assert "prompt is empty" in run.stderr
    assert fake_llm.requests == []


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_prompt_larger_than_the_window_is_named_as_such(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, print_run: PrintRun
) -> None:
    model = MODELS[protocol]
    (workspace / "agent.yaml").write_text(f'models:\n  "{model}":\n    context_window: 2000\n')
    huge = "diff --git a/x b/x\n" + "+ a changed line of the piped diff\n" * 2_000

    run = print_run(huge, model=model)

    assert run.code == 1, run.stderr
    assert f"The prompt is too long for {model}" in run.stderr
    assert "context window is 2,000 tokens" in run.stderr
    assert "--model" in run.stderr
    assert "read it in parts" in run.stderr
    assert "Resume with: agent --resume" in run.stderr
    assert fake_llm.requests == []  # neither sent nor compacted in vain


def test_an_overflow_compaction_cannot_fix_is_blamed_on_the_prompt(
    fake_llm: FakeLlmServer, print_run: PrintRun
) -> None:
    fake_llm.script(*[Fault.overflow()] * 5)
    prompt = "Review this log:\n" + "ERROR something failed at step n\n" * 500

    run = print_run(prompt, "--output-format", "json", model=MODELS["openai"])

    assert run.code == 1, run.stderr
    output = run.json()
    assert output["status"] == "failed"
    assert f"The prompt is too long for {MODELS['openai']}" in output["error"]
    assert len(fake_llm.requests) <= 4
