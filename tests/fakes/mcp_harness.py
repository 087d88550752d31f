"""Run the fake MCP server (`tests/fakes/mcp_server.py`) over stdio or HTTP on loopback, or
servers that misbehave before they ever speak MCP (garbage, a hang, a crash loop)."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
