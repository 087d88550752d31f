"""Run the fake MCP server (`tests/fakes/mcp_server.py`) over stdio or HTTP on loopback, or
servers that misbehave before they ever speak MCP (garbage, a hang, a crash loop)."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLlmServer, RecordedRequest, Step
from tools.mcp.runtime import McpServers
from tools.mcp.settings import McpServerSettings
from tools.mcp.supervisor import ServerState, ServerStatus

SERVER_SCRIPT = Path(__file__).with_name("mcp_server.py")


def stdio_entry(state: Path, **options: Any) -> dict[str, Any]:
    """A ``mcp_servers`` entry (as config data) for the fake server; ``env`` merges."""
    env = {"FAKE_MCP_STATE": str(state), **options.pop("env", {})}
    return {"command": sys.executable, "args": [str(SERVER_SCRIPT)], "env": env, **options}


def stdio_settings(state: Path, **options: Any) -> McpServerSettings:
    return McpServerSettings.model_validate(stdio_entry(state, **options))


def gated_entry(state: Path, gate: Path, **options: Any) -> dict[str, Any]:
    """The fake server, ready only once the file ``gate`` exists (`open_gate`)."""
    return stdio_entry(state, env={"FAKE_MCP_START_GATE": str(gate)}, **options)


def open_gate(gate: Path) -> None:
    """Let a `gated_entry` server finish its start."""
    gate.write_text("open\n")


def shell_entry(script: str, **options: Any) -> dict[str, Any]:
    """A ``mcp_servers`` entry for a stdio "server" that is a bash script."""
    return {"command": "bash", "args": ["-c", script], **options}


def garbage_entry(state: Path, **options: Any) -> dict[str, Any]:
    """A server that writes non-JSON lines to stdout for ever; each start adds a line to
    ``state/starts``."""
    script = f"echo start >> {shlex.quote(str(state / 'starts'))}; "
    return shell_entry(script + "while true; do echo notjson; sleep 0.2; done", **options)


def hanging_entry(**options: Any) -> dict[str, Any]:
    """A server that never answers (nor exits): its start can only time out."""
    return shell_entry("exec sleep 1000", **options)


def crashing_entry(state: Path, **options: Any) -> dict[str, Any]:
    """A server that says why on stderr and exits at once, every time it is started."""
    script = f"echo start >> {shlex.quote(str(state / 'starts'))}; "
    return shell_entry(script + "echo 'fatal: no database' >&2; exit 1", **options)


def agent_log(home: Path) -> list[dict[str, Any]]:
    """The records of the agent's log under the decoy ``home``."""
    logs = sorted((home / ".agent" / "logs").glob("*.jsonl"))
    return [json.loads(line) for path in logs for line in path.read_text().splitlines()]


def wait_for_log(home: Path, event: str, timeout: float = 90, *, after: int = 0) -> None:
    """Poll the agent's log until it has more than ``after`` records of ``event``; fail the
    test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while _count(home, event) <= after:
        assert time.monotonic() < deadline, f"no new {event} in the agent's log"
        time.sleep(0.1)


def _count(home: Path, event: str) -> int:
    return sum(record.get("event") == event for record in agent_log(home))


def answer_once_ready(
    llm: FakeLlmServer, home: Path, *steps: Step, gate: Path | None = None
) -> None:
    """Answer with ``steps`` in order, the first only once an MCP server is ready.

    The agent does not wait for its servers, so its first request may go out before their
    tools are offered; a scripted call of one of them must not race the server's start.
    With ``gate``, the first request opens it (`open_gate`) first: a `gated_entry` server
    then starts only once the agent has sent its first request.
    """
    queue, before = deque(steps), _count(home, "mcp_server_ready")

    def respond(request: RecordedRequest) -> Step:
        if len(queue) == len(steps):
            if gate is not None:
                open_gate(gate)
            wait_for_log(home, "mcp_server_ready", after=before)
        return queue.popleft()

    llm.respond_with(respond)


def wait_for_state(
    servers: McpServers, name: str, states: set[ServerState], timeout: float = 60.0
) -> ServerStatus:
    """Poll until server ``name`` is in one of ``states``; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for status in servers.statuses():
            if status.name == name and status.state in states:
                return status
        time.sleep(0.05)
    raise AssertionError(f"{name} never reached {states}: {servers.statuses()}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(state: Path) -> Iterator[str]:
    """The fake server on Streamable HTTP at 127.0.0.1; yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--http", str(port)],
        env={"FAKE_MCP_STATE": str(state), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
