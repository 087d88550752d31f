"""End to end: ``agent -p`` completes its turn despite failures recovery can get past.

The real ``agent`` runs in a subprocess with the real SDKs against the fake LLM server, with
an ``agent.yaml`` in the workspace that makes every wait short. The test thread watches the
server's request log, so the times at which requests arrived are measured, not assumed.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.cli import MODELS, AgentRun, Protocol, agent_command, agent_env
from tests.fakes.llm_script import Fault, Reply, Step
from tests.fakes.llm_server import FakeLlmServer

PROTOCOLS: list[Protocol] = ["anthropic", "openai"]
FALLBACKS: dict[Protocol, str] = {
    "anthropic": "anthropic:claude-fallback",
    "openai": "openai:gpt-fallback",
}
ANSWER = "The build is green and every test passes."

FAST_RECOVERY: dict[str, float] = {
    "base_backoff": 0.05,
    "max_backoff": 0.2,
    "rate_limit_floor": 0.1,
    "max_retry_wait": 5,
    "max_total_wait": 20,
}


def write_config(
    workspace: Path,
    *,
    request_timeout: float = 30,
    stream_idle_timeout: float = 30,
    **recovery: float,
) -> dict[str, float]:
    """An ``agent.yaml`` with short waits, so recovery runs in real time in a test.

    ``recovery`` overrides keys of the ``recovery:`` section; returns that section.
    """
    section = FAST_RECOVERY | recovery
    lines = [f"request_timeout: {request_timeout}", f"stream_idle_timeout: {stream_idle_timeout}"]
    lines += ["recovery:", *(f"  {key}: {value}" for key, value in section.items())]
    (workspace / "agent.yaml").write_text("\n".join(lines) + "\n")
    return section


def wire_name(model: str) -> str:
    """The model name the server sees: ``anthropic:claude-test`` → ``claude-test``."""
    return model.split(":", 1)[1]


@dataclass
class TimedRun(AgentRun):
    """A finished ``agent`` process, with when (seconds after its start) each request arrived."""

    arrivals: list[float]
    elapsed: float


def run_timed(
    *args: str,
    server: FakeLlmServer,
    workspace: Path,
    home: Path,
    timeout: float = 40,
    on_request: Callable[[int, subprocess.Popen[str]], None] | None = None,
) -> TimedRun:
    """Run ``agent ARGS`` in ``workspace``, noting the arrival time of every request.

    ``on_request(n, process)`` is called once the n-th request (1-based) has arrived.
    """
    started = time.monotonic()
    process = subprocess.Popen(
        agent_command(*args),
        cwd=workspace,
        env=agent_env(server, home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    arrivals: list[float] = []
    try:
        while process.poll() is None:
            now = time.monotonic() - started
            assert now < timeout, f"agent still running after {timeout}s"
            while len(server.requests) > len(arrivals):
                arrivals.append(now)
                if on_request is not None:
                    on_request(len(arrivals), process)
            time.sleep(0.01)
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    elapsed = time.monotonic() - started
    arrivals.extend([elapsed] * (len(server.requests) - len(arrivals)))
    return TimedRun(process.returncode, stdout, stderr, arrivals, elapsed)


def run_prompt(
    server: FakeLlmServer,
    workspace: Path,
    home: Path,
    model: str,
    *flags: str,
    json_output: bool = False,
) -> TimedRun:
    """``agent -p`` with one prompt on ``model`` (plus ``flags``)."""
    output = ("--output-format", "json") if json_output else ()
    return run_timed(
        "-p",
        "is the build green?",
        "--model",
        model,
        *flags,
        *output,
        server=server,
        workspace=workspace,
        home=home,
    )


def event_types(data: dict[str, Any]) -> list[str]:
    return [event["type"] for event in data["events"]]


def assert_answered(run: TimedRun, requests: int, server: FakeLlmServer) -> None:
    """Exit 0 with the answer, after exactly ``requests`` requests and the whole script used."""
    assert run.code == 0, run.stderr
    assert len(server.requests) == requests, [r.model for r in server.requests]
    assert server.remaining == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rate_limit_waits_as_long_as_the_server_asked(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace)
    fake_llm.script(
        Fault.status(429, "rate_limit_error", headers={"retry-after": "1"}), Reply.text(ANSWER)
    )

    run = run_prompt(fake_llm, workspace, decoy_home, MODELS[protocol])

    assert_answered(run, 2, fake_llm)
    assert run.stdout.strip() == ANSWER
    gap = run.arrivals[1] - run.arrivals[0]
    assert gap >= 1.0 - 0.05, f"retried {gap:.2f}s after a retry-after of 1s"
    assert f"Rate limited by {protocol} — retrying in 1s" in run.stderr


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sustained_overload_falls_back_to_the_next_model(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace)
    primary, fallback = MODELS[protocol], FALLBACKS[protocol]
    overloaded = Fault.status(529, "overloaded_error")
    fake_llm.script(overloaded, overloaded, overloaded, model=wire_name(primary))
    fake_llm.script(Reply.text(ANSWER), model=wire_name(fallback))

    run = run_prompt(
        fake_llm, workspace, decoy_home, primary, "--fallback-model", fallback, json_output=True
    )

    assert_answered(run, 4, fake_llm)
    assert len(fake_llm.requests_for(wire_name(primary))) == 3
    assert len(fake_llm.requests_for(wire_name(fallback))) == 1
    data = run.json()
    assert data["status"] == "done"
    assert data["result"] == ANSWER
    switches = [e for e in data["events"] if e["type"] == "fallback_activated"]
    assert [(e["from_model"], e["to_model"]) for e in switches] == [(primary, fallback)]
    assert event_types(data).count("retry_scheduled") == 2


@dataclass(frozen=True)
class Transient:
    """Failures that come before the answer, and the config that keeps the test short."""

    id: str
    faults: tuple[Step, ...]
    config: dict[str, float]
    protocols: tuple[Protocol, ...] = ("anthropic", "openai")


def _cut_after(protocol: Protocol) -> int:
    """Events up to and including the first half of the answer's text."""
    return 4 if protocol == "anthropic" else 2


TRANSIENTS = [
    Transient("500s", (Fault.status(500, "api_error"), Fault.html(502)), {}, ("anthropic",)),
    Transient("connection reset", (Fault.drop(),), {}, ("openai",)),
    Transient(
        "hang past request_timeout", (Fault.hang(20),), {"request_timeout": 1}, ("anthropic",)
    ),
    Transient(
        "hang past stream_idle_timeout", (Fault.hang(20),), {"stream_idle_timeout": 1}, ("openai",)
    ),
    Transient("in-stream overloaded", (Fault.stream_error("overloaded_error"),), {}),
]
TRANSIENT_CASES = [
    pytest.param(case, protocol, id=f"{case.id}-{protocol}")
    for case in TRANSIENTS
    for protocol in case.protocols
]


@pytest.mark.parametrize(("case", "protocol"), TRANSIENT_CASES)
def test_transient_failures_are_retried_until_the_answer(
    case: Transient,
    protocol: Protocol,
    fake_llm: FakeLlmServer,
    workspace: Path,
    decoy_home: Path,
) -> None:
    write_config(workspace, **case.config)
    fake_llm.script(*case.faults, Reply.text(ANSWER))

    run = run_prompt(fake_llm, workspace, decoy_home, MODELS[protocol])

    assert_answered(run, len(case.faults) + 1, fake_llm)
    assert run.stdout == ANSWER + "\n"
    recovered_in = run.arrivals[-1] - run.arrivals[0]
    assert recovered_in < 5, f"the answer was asked for again only after {recovered_in:.1f}s"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stream_cut_mid_way_is_restarted_without_duplicating_text(
    protocol: Protocol, fake_llm: FakeLlmServer, workspace: Path, decoy_home: Path
) -> None:
    write_config(workspace)
    cut = Fault.cut_stream(after_events=_cut_after(protocol), reply=Reply.text(ANSWER))
    fake_llm.script(cut, Reply.text(ANSWER))

    run = run_prompt(fake_llm, workspace, decoy_home, MODELS[protocol])

    assert_answered(run, 2, fake_llm)
    assert "connection" in run.stderr.lower()  # the person is told why it started over
    assert run.stdout == ANSWER + "\n"


PERMANENT = [
    pytest.param(
        "anthropic",
        FALLBACKS["openai"],
        Fault.status(401, "authentication_error", message="invalid x-api-key"),
        id="401-anthropic-to-openai",
    ),
    pytest.param(
        "openai",
        FALLBACKS["openai"],
        Fault.status(
            429,
            "insufficient_quota",
            code="insufficient_quota",
            message="You exceeded your current quota",
        ),
        id="insufficient_quota-openai",
    ),
]


@pytest.mark.parametrize(("protocol", "fallback", "fault"), PERMANENT)
def test_bad_key_or_no_quota_falls_back_after_one_request(
    protocol: Protocol,
    fallback: str,
    fault: Fault,
    fake_llm: FakeLlmServer,
    workspace: Path,
    decoy_home: Path,
) -> None:
    write_config(workspace)
    primary = MODELS[protocol]
    fake_llm.script(fault, fault, model=wire_name(primary))
    fake_llm.script(Reply.text(ANSWER), model=wire_name(fallback))

    run = run_prompt(
        fake_llm, workspace, decoy_home, primary, "--fallback-model", fallback, json_output=True
    )

    assert run.code == 0, run.stderr
    assert len(fake_llm.requests_for(wire_name(primary))) == 1
    assert len(fake_llm.requests_for(wire_name(fallback))) == 1
    data = run.json()
    assert data["result"] == ANSWER
    assert "retry_scheduled" not in event_types(data)
    switches = [e for e in data["events"] if e["type"] == "fallback_activated"]
    assert [(e["from_model"], e["to_model"]) for e in switches] == [(primary, fallback)]
