"""``agent mcp list`` and ``agent mcp approve``: MCP servers outside a session.

``list`` starts each server the way a session would (sandbox, timeouts), gives them a few
seconds (``--wait``) to be ready or fail, prints each one's state, a server still starting
included, and stops them again: a server that hangs does not hang the command.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.command_env import command_env
from agent.setup.config import Config, agent_home
from agent.setup.mcp_setup import McpPlan, plan_servers, start_servers, status_table
from agent.setup.startup import Options, SetupError, boot, secret_redactor
from agent.terminal.console import SafeConsole
from tools.guard.sandbox import Sandbox
from tools.mcp import ProjectApprovals
from tools.mcp.supervisor import ServerState

SETTLED = {ServerState.READY, ServerState.FAILED, ServerState.PAUSED, ServerState.RESTARTING}
LIST_WAIT = 5.0
"""Seconds ``agent mcp list`` gives the servers to start, by default."""


def list_servers(workspace: Path, console: Console | None = None, wait: float = LIST_WAIT) -> int:
    """Start the configured servers, give them up to ``wait`` seconds, print each one's
    state, stop them; the exit code."""
    console = console or SafeConsole(highlight=False)
    loaded = _load(workspace, console)
    if loaded is None:
        return ExitCode.USAGE
    config, plan = loaded
    for notice in plan.notices:
        console.print(Text(notice, style="yellow"))
    environ = dict(os.environ)
    servers = start_servers(
        plan.start,
        workspace=workspace,
        environ=environ,
        sandbox=Sandbox.create(config.sandbox, env=command_env(config)),
        redact=secret_redactor(config, environ).text,
    )
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if all(status.state in SETTLED for status in servers.statuses()):
                break
            time.sleep(0.1)
        statuses = servers.statuses()
        console.print(status_table(statuses, plan.pending))
        starting = [s.name for s in statuses if s.state is ServerState.STARTING]
        if starting:
            longest = max(plan.start[name].start_timeout for name in starting)
            console.print(
                Text(
                    f"Not ready within {wait:g}s: {', '.join(starting)}. A session does not "
                    f"wait for them; `agent mcp list --wait {longest:g}` gives them their "
                    "start_timeout.",
                    style="dim",
                )
            )
    finally:
        servers.close()
    return ExitCode.OK


def approve_servers(workspace: Path, names: list[str], console: Console | None = None) -> int:
    """Allow the project servers ``names`` (all pending ones if empty) in this workspace."""
    console = console or SafeConsole(highlight=False)
    loaded = _load(workspace, console)
    if loaded is None:
        return ExitCode.USAGE
    _, plan = loaded
    unknown = [name for name in names if name not in plan.pending]
    if unknown:
        known = ", ".join(sorted(plan.pending)) or "none"
        console.print(
            Text(f"agent: not a pending .mcp.json server: {', '.join(unknown)} (pending: {known})")
        )
        return ExitCode.USAGE
    approvals = ProjectApprovals(agent_home(), workspace)
    for name in names or sorted(plan.pending):
        settings = plan.pending[name]
        try:
            approvals.allow(name, settings)
        except OSError as error:
            console.print(Text(f"agent: cannot save the approval: {error.strerror or error}"))
            return ExitCode.FAILED
        console.print(f"Allowed MCP server {name!r}: {settings.describe()}")
    if not plan.pending:
        console.print("No .mcp.json servers are waiting to be allowed here.")
    return ExitCode.OK


def _load(workspace: Path, console: Console) -> tuple[Config, McpPlan] | None:
    try:
        started = boot(Options(workspace=workspace))
    except SetupError as error:
        console.print(Text(f"agent: {error}", style="red"))
        return None
    config, held = started.config, started.trust.held
    if held is not None and "mcp_servers" in held.settings:
        names = ", ".join(held.settings["mcp_servers"])
        console.print(
            Text(f"./agent.yaml's servers ({names}) wait for `agent trust`.", style="yellow")
        )
    return config, plan_servers(config.mcp_servers, workspace, started.home)
