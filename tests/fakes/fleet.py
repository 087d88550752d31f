"""Many real ``agent -p`` processes at once, all on one key, against one fake LLM server.

Used by the fleet tests and by ``benchmarks/fleet_bench.py``: each process does one task of
``steps`` tool calls (``list_files``) and a final answer, so it sends ``steps + 1`` requests
when nothing fails. Every process shares ``AGENT_HOME`` (where the file backend lives), as
agents run by one person do; each has its own workspace.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.fakes.cli import AgentRun, agent_command, agent_env
from tests.fakes.llm_script import Reply, Step
from tests.fakes.llm_server import FakeLlmServer, RecordedRequest, Responder

MODEL = "anthropic:claude-test"


def task_responder(steps: int) -> Responder:
    """Answers like a model doing a task: ``steps`` tool calls, then ``done``."""

    def respond(request: RecordedRequest) -> Step:
        results = sum(
            1
            for message in request.body.get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        if results < steps:
            return Reply.tool_call("list_files", {"pattern": "*"})
        return Reply.text("done")

    return respond


@dataclass
class FleetRun:
    """What a fleet of agents did: each process's result and the time until the last ended."""

    runs: list[AgentRun]
    makespan: float
    """Seconds from the server's first request (after its start gate) to the last exit."""


def write_config(path: Path, shared: dict[str, object]) -> Path:
    """An agent config whose ``recovery.shared`` is ``shared``.

    Streams may wait long for the first byte: the server's start gate holds requests until
    every agent is up.
    """
    config = {"recovery": {"shared": shared}, "stream_idle_timeout": 600}
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_fleet(
    server: FakeLlmServer,
    root: Path,
    *,
    agents: int,
    config: Path,
    timeout: float = 240,
    on_started: Callable[[], None] | None = None,
) -> FleetRun:
    """Start ``agents`` processes at once, wait for all of them, and time the whole.

    ``on_started`` runs once every process has been started.
    """
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    started = time.time()
    processes = []
    for number in range(agents):
        workspace = root / f"workspace-{number}"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "notes.txt").write_text("a file to list\n", encoding="utf-8")
        command = agent_command(
            "-p", "list the files", "--yes", "--output-format", "json", "--model", MODEL
        )
        processes.append(
            subprocess.Popen(
                [*command, "--config", str(config)],
                cwd=workspace,
                env=agent_env(server, home),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    if on_started is not None:
        on_started()
    runs = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=timeout)
        runs.append(AgentRun(process.returncode, stdout, stderr))
    ended = time.time()
    first = server.capacity.started_at if server.capacity else None
    return FleetRun(runs, ended - (first or started))
