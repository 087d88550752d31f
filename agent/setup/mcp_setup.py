"""Which MCP servers a session runs: the config's, and the project's the person allowed.

Imported by `agent.app` only when the config or the project names a server, so a session
without any imports nothing MCP.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text

from recovery.budget import CircuitBreaker
from tools.guard.sandbox import Sandbox, SandboxMode
from tools.mcp import McpServerSettings, ProjectApprovals, read_project_servers
from tools.mcp.runtime import McpServers
from tools.mcp.supervisor import ServerState, ServerStatus

DOWN_STATES = (ServerState.RESTARTING, ServerState.PAUSED, ServerState.FAILED)


@dataclass
class McpPlan:
    """The servers to start now, those awaiting the person's approval, and notices."""

    start: dict[str, McpServerSettings] = field(default_factory=dict)
    pending: dict[str, McpServerSettings] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def plan_servers(
    configured: Mapping[str, McpServerSettings], workspace: Path, home: Path
) -> McpPlan:
    """The config's enabled servers, plus ``.mcp.json``'s: allowed ones start, others wait.

    A server in the config wins over a project server of the same name.
    """
    plan = McpPlan(start={name: s for name, s in configured.items() if s.enabled})
    project = read_project_servers(workspace)
    plan.notices += project.problems
    approvals = ProjectApprovals(home, workspace)
    for name, settings in project.servers.items():
        if name in configured:
            continue
        if approvals.allowed(name, settings):
            plan.start[name] = settings
        else:
            plan.pending[name] = settings
    return plan


def start_servers(
    servers: Mapping[str, McpServerSettings],
    *,
    workspace: Path,
    environ: Mapping[str, str],
    sandbox: Sandbox,
    redact: Callable[[str], str],
    on_change: Callable[[ServerStatus], None] = lambda status: None,
) -> McpServers:
    """Start supervising ``servers`` in the background; stdio servers run in ``sandbox``.

    Every stdio server starts through the launcher, even one whose entry says
    ``sandbox: false`` (it then runs unconfined): the launcher ends it with the agent.
    """
    unconfined = Sandbox(SandboxMode.OFF)

    def wrap(argv: list[str], confined: bool) -> list[str]:
        return (sandbox if confined else unconfined).wrap(argv, workspace)

    running = McpServers(
        workspace=workspace,
        environ=environ,
        wrap=wrap,
        breaker=lambda s: CircuitBreaker(s.max_failures, s.pause, time.monotonic),
        redact=redact,
        on_change=on_change,
        env=sandbox.environment,
    )
    for name, settings in servers.items():
        running.add(name, settings)
    return running


def pending_notice(pending: Mapping[str, McpServerSettings]) -> str:
    """What -p says about project servers nobody has allowed yet."""
    names = ", ".join(sorted(pending))
    return (
        f".mcp.json adds MCP servers not allowed yet ({names}); they were not started. "
        "Allow them with `agent mcp approve`, or in an interactive session."
    )


def approval_question(name: str, settings: McpServerSettings) -> str:
    """The question the REPL asks before starting a project's server for the first time."""
    return (
        f"This project's .mcp.json adds MCP server {name!r}, which runs: "
        f"{settings.describe()}\nAllow it (also in later sessions here)? [y/N] "
    )


def status_table(
    statuses: list[ServerStatus], pending: Mapping[str, McpServerSettings] | None = None
) -> Text:
    """One line per server: name, state, tools or reason; then servers not allowed yet."""
    pending = pending or {}
    if not statuses and not pending:
        return Text(
            "No MCP servers. Add them under mcp_servers: in the config, or in .mcp.json.",
            style="dim",
        )
    text = Text()
    now = time.time()
    for status in statuses:
        style = "red" if status.state in DOWN_STATES else "green"
        if status.state is ServerState.STARTING:
            style = "yellow"
        text.append(f"{status.name:<16} ", style="bold")
        text.append(status.describe(now) + "\n", style=style)
    for name in pending:
        text.append(f"{name:<16} ", style="bold")
        text.append("not allowed yet (.mcp.json; run `agent mcp approve`)\n", style="yellow")
    text.rstrip()
    return text


def down_summary(statuses: list[ServerStatus]) -> str:
    """``mcp: db down`` for the status line, or empty when every server is fine."""
    down = [s.name for s in statuses if s.state in DOWN_STATES]
    return f"mcp: {', '.join(down)} down" if down else ""
