"""An agent's MCP servers: those it runs, those awaiting the person's approval, their tools.

Nothing MCP is imported until a server is configured or a project's ``.mcp.json`` exists.
The agent that replaces another in one REPL (``/clear``, ``/resume``) shares its servers
rather than restarting them, which would take seconds and repeat their notices and approval
questions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
        return self._tool_list()

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

    def statuses(self) -> list[ServerStatus]:
        """Each server's state, for ``/mcp`` and the status line."""
        return self.servers.statuses() if self.servers is not None else []

    async def first_start(self) -> None:
        """Wait (briefly) for the servers' first start, so a first request offers their tools."""
        if self.servers is not None:
            await self.servers.first_start()

    def close(self) -> None:
        """Stop the servers, unless another link owns them now."""
        if self.servers is not None and self._owner:
            self.servers.close()
