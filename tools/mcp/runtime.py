"""The MCP servers of a session, run on their own thread and event loop.

The servers live apart from the agent's event loop so that they start in the background
while the person types, before any turn runs, and so that a misbehaving server or SDK can
never stall the REPL. Calls cross over with `asyncio.run_coroutine_threadsafe`; cancelling
the caller (Ctrl-C, a timeout) cancels the call on the server's side too. A stdio server's
stderr goes to the log, line by line, with secrets redacted.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import structlog

from tools.mcp.connection import Reply, open_connection
from tools.mcp.settings import McpServerSettings, UnsetVariable
from tools.mcp.supervisor import Breaker, ServerState, ServerStatus, ServerSupervisor

log = structlog.get_logger("tools.mcp")
T = TypeVar("T")
CLOSE_TIMEOUT = 10.0
"""Seconds `McpServers.close` waits for the servers to stop (the SDK kills stragglers)."""


class McpServers:
    """Starts, supervises and calls the configured MCP servers.

    Args:
        workspace: Where stdio servers run unless their entry names a ``cwd``.
        environ: Resolves ``${VAR}`` references in the entries.
        wrap: Turns a stdio server's argv into the launcher's argv, confined or not (the
            entry's ``sandbox``); the launcher ends the server with the agent. None: run as is.
        breaker: Makes each server's circuit breaker from its settings.
        redact: Hides secrets in the server's stderr before it is logged.
        on_change: Called with a server's new status whenever it changes, on the servers'
            thread (or the caller's, for a server that cannot be started at all).
        env: The environment a stdio server starts with (the ``shell_env`` policy's), under
            its entry's own ``env``, which always passes. None: only the SDK's few defaults.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        environ: Mapping[str, str],
        wrap: Callable[[list[str], bool], list[str]] | None,
        breaker: Callable[[McpServerSettings], Breaker],
        redact: Callable[[str], str] = lambda text: text,
        on_change: Callable[[ServerStatus], None] = lambda status: None,
        env: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self._workspace = workspace
        self._env = env
        self._on_change = on_change
        self._environ = environ
        self._wrap = wrap
        self._breaker = breaker
        self._redact = redact
        self._supervisors: dict[str, ServerSupervisor] = {}
        self._added: dict[str, ServerStatus] = {}
        """Each server's status until its supervisor reports (failed, or starting)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr: list[_StderrLog] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp", daemon=True)
        self._thread.start()

    def add(self, name: str, settings: McpServerSettings) -> None:
        """Start supervising server ``name`` in the background (returns at once)."""
        try:
            resolved = settings.resolved(self._environ)
        except UnsetVariable as error:
            reason = f"{error}; set it, or change mcp_servers.{name}"
            self._added[name] = ServerStatus(name, ServerState.FAILED, reason=reason)
            log.warning("mcp_server_not_started", server=name, reason=reason)
            self._on_change(self._added[name])
            return
        self._added[name] = ServerStatus(name, ServerState.STARTING)
        self._submit(self._start(name, resolved))

    async def _start(self, name: str, settings: McpServerSettings) -> None:
        stderr = _StderrLog(name, self._redact)
        self._stderr.append(stderr)
        supervisor = ServerSupervisor(
            name,
            settings,
            launch=lambda: self._launch(settings, stderr),
            breaker=self._breaker(settings),
            last_stderr=stderr.last,
            on_change=self._on_change,
        )
        self._supervisors[name] = supervisor
        self._tasks.append(asyncio.create_task(supervisor.run(), name=f"mcp-{name}"))

    def _launch(self, settings: McpServerSettings, stderr: _StderrLog) -> Any:
        stderr.forget()  # a failure should quote this run's stderr, not an earlier one's
        argv = None
        if settings.command is not None:
            argv = [settings.command, *settings.args]
            if self._wrap is not None:
                argv = self._wrap(argv, settings.sandbox)
            if self._env is not None:
                settings = settings.model_copy(update={"env": {**self._env(), **settings.env}})
        return open_connection(settings, argv=argv, cwd=self._workspace, errlog=stderr.file)

    def statuses(self) -> list[ServerStatus]:
        """Every server's state, in the order they were added (at once: never waits)."""
        running = dict(self._supervisors)
        return [
            running[name].status if name in running else status
            for name, status in list(self._added.items())
        ]

    def settings(self, server: str) -> McpServerSettings:
        """The entry of ``server``, with its ``${VAR}`` references resolved."""
        return self._supervisors[server].settings

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Reply:
        """Call ``tool`` on ``server`` (see `ServerSupervisor.call` for what it raises)."""
        supervisor = self._supervisors[server]
        return await asyncio.wrap_future(self._submit(supervisor.call(tool, arguments)))

    def unavailable_text(self, server: str) -> str:
        """What the model is told about ``server`` while it is down."""
        return self._supervisors[server].unavailable_text()

    def close(self) -> None:
        """Stop every server (whole process groups) and the thread; safe to call twice."""
        if not self._thread.is_alive():
            return
        try:
            self._submit(self._stop()).result(CLOSE_TIMEOUT)
        except Exception:
            log.warning("mcp_close_incomplete", exc_info=True)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(CLOSE_TIMEOUT)
        for stderr in self._stderr:
            stderr.close()

    async def _stop(self) -> None:
        for supervisor in list(self._supervisors.values()):
            supervisor.stop()
        stopping = asyncio.gather(*self._tasks, return_exceptions=True)
        try:
            await asyncio.wait_for(asyncio.shield(stopping), CLOSE_TIMEOUT / 2)
        except TimeoutError:  # the SDK failed to stop a server: cancel outright
            for task in self._tasks:
                task.cancel()
            await stopping

    def _submit(self, work: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self._loop)


class _StderrLog:
    """A pipe for a server's stderr; a thread logs each line, redacted, and keeps the last."""

    def __init__(self, server: str, redact: Callable[[str], str]) -> None:
        self._server = server
        self._redact = redact
        self._lines: deque[str] = deque(maxlen=1)
        read_fd, write_fd = os.pipe()
        self.file = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        reader = threading.Thread(target=self._pump, args=(read_fd,), daemon=True)
        reader.start()

    def _pump(self, read_fd: int) -> None:
        with os.fdopen(read_fd, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                text = self._redact(line.rstrip()[:2000])
                if text:
                    self._lines.append(text[:300])
                    log.info("mcp_server_stderr", server=self._server, line=text)

    def last(self) -> str:
        """The server's latest stderr line (redacted, cut short), or empty."""
        return self._lines[-1] if self._lines else ""

    def forget(self) -> None:
        self._lines.clear()

    def close(self) -> None:
        self.file.close()
