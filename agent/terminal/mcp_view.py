"""``agent mcp list`` and ``agent mcp approve``: MCP servers outside a session.

``list`` starts each server the way a session would (sandbox, timeouts) and prints every one
at once with its state, "starting" for one not ready yet. On a terminal the lines are then
updated in place as servers come up or fail, until none is starting (or Ctrl-C); elsewhere
the states are printed once, as they are, unless ``--wait`` gives the servers time. The
servers are stopped again at the end: a server that hangs never hangs the command.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.command_env import command_env
from agent.setup.config import agent_home
from agent.setup.mcp_setup import McpPlan, plan_servers, start_servers, status_table
from agent.setup.startup import Options, SetupError, Started, boot
from agent.terminal.console import SafeConsole
from tools.guard.sandbox import Sandbox
from tools.mcp import ProjectApprovals
from tools.mcp.runtime import McpServers
from tools.mcp.supervisor import ServerState, ServerStatus

POLL = 0.1
"""Seconds between looks at the servers' states (they change on the servers' thread)."""


def list_servers(workspace: Path, console: Console | None = None, wait: float | None = None) -> int:
    """Start the configured servers, print each one's state, stop them; the exit code.

    On a terminal the list is shown at once and redrawn as states change, for up to ``wait``
    seconds (default: the longest start timeout of a server still starting). Elsewhere it is
    printed once: at once, or after up to ``wait`` seconds if given.
    """
    console = console or SafeConsole(highlight=False)
    loaded = _load(workspace, console)
    if loaded is None:
        return ExitCode.USAGE
    started, plan = loaded
    for notice in plan.notices:
        console.print(Text(notice, style="yellow"))
    config = started.config
    servers = start_servers(
        plan.start,
        workspace=workspace,
        environ=started.environ,
        sandbox=Sandbox.create(config.sandbox, env=command_env(config)),
        redact=started.redact,
    )
    try:
        if console.is_terminal:
            return _watch(servers, plan, console, wait)
        if wait:
            _settle(servers, time.monotonic() + wait)
        console.print(_listing(servers.statuses(), plan))
    finally:
        servers.close()
    return ExitCode.OK


def _watch(servers: McpServers, plan: McpPlan, console: Console, wait: float | None) -> int:
    """Show the list at once and redraw it in place until no server is starting."""
    longest = max((settings.start_timeout for settings in plan.start.values()), default=0.0)
    deadline = time.monotonic() + (longest + 1 if wait is None else wait)
    statuses = servers.statuses()
    with Live(_listing(statuses, plan, watching=True), console=console, auto_refresh=False) as live:
        try:
            while _starting(statuses) and time.monotonic() < deadline:
                time.sleep(POLL)
                statuses = servers.statuses()
                live.update(_listing(statuses, plan, watching=True), refresh=True)
        except KeyboardInterrupt:
            live.update(_listing(statuses, plan), refresh=True)
            return ExitCode.INTERRUPTED
        live.update(_listing(statuses, plan), refresh=True)
    return ExitCode.OK


def _settle(servers: McpServers, deadline: float) -> None:
    """Wait until no server is starting, or ``deadline`` (`time.monotonic`)."""
    while _starting(servers.statuses()) and time.monotonic() < deadline:
        time.sleep(POLL)


def _starting(statuses: Sequence[ServerStatus]) -> list[str]:
    """The servers on their first start: a restart's state says why it failed already."""
    return [s.name for s in statuses if s.state is ServerState.STARTING and not s.failures]


def _listing(statuses: Sequence[ServerStatus], plan: McpPlan, *, watching: bool = False) -> Group:
    """The table, and a line about the servers still starting."""
    table = status_table(list(statuses), plan.pending)
    starting = _starting(statuses)
    if not starting:
        return Group(table)
    names = ", ".join(starting)
    if watching:
        note = f"Waiting for {names} to start (Ctrl-C to stop waiting)."
    else:
        longest = max(plan.start[name].start_timeout for name in starting)
        note = (
            f"Still starting: {names}. A session does not wait for them: their tools join "
            f"once they are up. `agent mcp list --wait {longest:g}` waits for them."
        )
    return Group(table, Text(note, style="dim"))


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


def _load(workspace: Path, console: Console) -> tuple[Started, McpPlan] | None:
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
    return started, plan_servers(config.mcp_servers, workspace, started.home)
