"""An agent's MCP servers: those it runs, those awaiting the person's approval, their tools.

Nothing MCP is imported until a server is configured or a project's ``.mcp.json`` exists.
The agent that replaces another in one REPL (``/clear``, ``/resume``) shares its servers
rather than restarting them, which would take seconds and repeat their notices and approval
questions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from providers import ToolSpec
from providers.events import Event
from tools import Tool
from tools.events import McpServerChanged
from tools.guard.sandbox import Sandbox
from tools.mcp import McpServerSettings, ProjectApprovals

if TYPE_CHECKING:
    from tools.mcp.runtime import McpServers
    from tools.mcp.supervisor import ServerStatus
    from tools.mcp.tool import McpToolList


class McpLink:
    """The MCP servers one agent uses.

    Args:
        workspace: Where servers run, and whose ``.mcp.json`` is read.
        home: ``AGENT_HOME``, where project approvals are kept.
        environ: The environment servers inherit (minus secrets; see `McpServers`).
        sandbox: What confines stdio servers.
        redact: Hides secrets in what servers say.
        show: Prints a notice for the person.
        emit: Receives `McpServerChanged` when a server goes down or comes back up, on the
            agent's thread: the servers' reports are passed on when the tools are next
            listed (each request, each tool call).
    """

    def __init__(
        self,
        *,
        workspace: Path,
        home: Path,
        environ: Mapping[str, str],
        sandbox: Sandbox,
        redact: Callable[[str], str],
        show: Callable[[str], None],
        emit: Callable[[Event], None] = lambda event: None,
    ) -> None:
        self.workspace = workspace
        self.home = home
        self._environ = environ
        self._sandbox = sandbox
        self._redact = redact
        self._show = show
        self._emit = emit
        self._changes: deque[ServerStatus] = deque()
        """Status changes the servers' thread reported, not yet looked at."""
        self._up: dict[str, bool] = {}
        """Whether each server was last seen up (its first start is not news)."""
        self.servers: McpServers | None = None
        """The running servers (None until one is added)."""
        self.pending: dict[str, McpServerSettings] = {}
        """Project servers the person has not allowed yet, by name."""
        self._tool_list: McpToolList | None = None
        self._owner = True
        """Whether closing this link stops the servers (false while another link owns them)."""
        self._server_of: dict[str, str] = {}
        """The server of each MCP tool listed so far, by tool name."""
        self._told: dict[str, set[str]] | None = None
        """The MCP tools the model was last offered, by server (None: no request yet)."""
        self._awaited: set[str] = set()
        """Servers the model was told are starting, and not yet that they are up or down."""

    def start(self, configured: Mapping[str, McpServerSettings], previous: McpLink | None) -> None:
        """Start the configured and allowed project servers in the background (returns at
        once), or share ``previous``'s running ones.

        ``previous`` keeps owning shared servers until it hands them over (`hand_over`), so
        if the new agent fails to start, closing it stops nothing the previous one uses.
        """
        if previous is not None and previous.servers is not None:
            self.servers, self._tool_list = previous.servers, previous._tool_list
            self.pending = previous.pending  # one dict: an approval counts for both
            self._changes, self._up = previous._changes, previous._up
            self._owner = False
            return
        if not configured and not (self.workspace / ".mcp.json").is_file():
            return
        from agent.setup import mcp_setup

        plan = mcp_setup.plan_servers(configured, self.workspace, self.home)
        for notice in plan.notices:
            self._show(notice)
        self.pending = plan.pending
        for name, settings in plan.start.items():
            self.add(name, settings)

    def hand_over(self, successor: McpLink) -> None:
        """Let ``successor``, which shares these servers, own them: closing this link no
        longer stops them."""
        if successor.servers is self.servers and self._owner:
            self._owner, successor._owner = False, True

    def add(self, name: str, settings: McpServerSettings) -> None:
        """Start supervising one more server (returns at once)."""
        if self.servers is None:
            from agent.setup import mcp_setup
            from tools.mcp.tool import McpToolList

            self.servers = mcp_setup.start_servers(
                {},
                workspace=self.workspace,
                environ=self._environ,
                sandbox=self._sandbox,
                redact=self._redact,
                on_change=self._changes.append,  # thread-safe; read on the loop's thread
            )
            self._tool_list = McpToolList(self.servers)
        self.pending.pop(name, None)
        self.servers.add(name, settings)

    def allow(self, name: str) -> None:
        """The person allowed project server ``name``: remember that, and start it.

        Raises:
            OSError: the approval could not be saved (the server is not started).
        """
        settings = self.pending[name]
        ProjectApprovals(self.home, self.workspace).allow(name, settings)
        self.add(name, settings)

    def tools(self) -> list[Tool[Any]]:
        """The tools the running servers offer now."""
        if self._tool_list is None:
            return []
        self._report_changes()
        listed = self._tool_list()
        self._server_of.update((tool.name, tool.server) for tool in listed)
        return list(listed)

    def tool_news(self, offered: Sequence[ToolSpec]) -> str | None:
        """What the model should hear, with a request offering ``offered``, about the MCP
        servers: at the first request, those not ready yet; later, a server whose tools
        joined or left the list, or that did not start. None when nothing is new.

        A server still starting is not waited for, not even by the first request: its
        tools join the list when it is up, and this says so.
        """
        if self.servers is None:
            return None
        offered_now: dict[str, set[str]] = {}
        for spec in offered:
            if (server := self._server_of.get(spec.name)) is not None:
                offered_now.setdefault(server, set()).add(spec.name)
        told, self._told = self._told, offered_now
        notes: list[str] = []
        for status in self.statuses():
            name, tools = status.name, offered_now.get(status.name, set())
            before = (told or {}).get(name, set())
            if tools - before and told is not None:
                joined = _names(tools - before)
                notes.append(
                    f"MCP server {name!r} is ready; its tools are available now: {joined}."
                )
            if before - tools:
                gone = _names(before - tools)
                notes.append(
                    f"MCP server {name!r} is {status.describe()}; its tools are gone: {gone}."
                )
            if tools:
                self._awaited.discard(name)
            else:
                notes += self._not_ready(status, first=told is None)
        return f"[{' '.join(notes)}]" if notes else None

    def _report_changes(self) -> None:
        from tools.mcp.supervisor import ServerState

        while self._changes:
            status = self._changes.popleft()
            if status.state is ServerState.READY:
                up = True
            elif status.state in (ServerState.RESTARTING, ServerState.PAUSED, ServerState.FAILED):
                up = False
            else:  # starting or stopped: not a change anyone needs to hear about yet
                continue
            was = self._up.get(status.name)
            self._up[status.name] = up
            if was == up or (was is None and up):
                continue
            self._emit(
                McpServerChanged(
                    server=status.name,
                    up=up,
                    state=status.state.value,
                    reason=status.reason,
                    tools=len(status.tools),
                )
            )

    def _not_ready(self, status: ServerStatus, *, first: bool) -> list[str]:
        """The note about a server without tools: at the first request, that it is coming
        or down; later, that one it was told is coming did not come."""
        from tools.mcp.supervisor import ServerState

        name, state = status.name, status.state
        if first and state in (ServerState.STARTING, ServerState.RESTARTING):
            self._awaited.add(name)
            why = "still starting" if state is ServerState.STARTING else status.describe()
            return [
                f"MCP server {name!r} is not ready yet ({why}); its tools will be offered "
                "once it is, and you will be told."
            ]
        if (first or name in self._awaited) and state in (ServerState.PAUSED, ServerState.FAILED):
            self._awaited.discard(name)
            return [f"MCP server {name!r} is not available: {status.describe()}."]
        return []

    def statuses(self) -> list[ServerStatus]:
        """Each server's state, for ``/mcp`` and the status line."""
        return self.servers.statuses() if self.servers is not None else []

    def close(self) -> None:
        """Stop the servers, unless another link owns them now."""
        if self.servers is not None and self._owner:
            self.servers.close()


def _names(tools: set[str], most: int = 10) -> str:
    shown = sorted(tools)[:most]
    more = f" and {len(tools) - most} more" if len(tools) > most else ""
    return ", ".join(shown) + more
