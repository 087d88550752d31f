"""Keeps one MCP server running: start timeout, health checks, restarts, a circuit breaker.

`ServerSupervisor.run` starts the server and, whenever it crashes, hangs, writes malformed
output or fails to start, throws the connection away (the SDK kills a stdio server's whole
process group) and starts it again after a capped, jittered backoff. After ``max_failures``
failures in a row the breaker pauses the server for ``pause`` seconds. `call` runs one tool
call under the per-call timeout; while the server is down it says which tools are
unavailable and until when, in words for the model.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import anyio
import structlog

from tools.mcp.connection import Connection, RemoteTool, Reply, ServerBroken
from tools.mcp.settings import McpServerSettings

log = structlog.get_logger("tools.mcp")

FIRST_RESTART_DELAY = 0.5
MAX_RESTART_DELAY = 30.0
HEALTH_INTERVAL = 15.0
"""Seconds between pings of an idle server, so a silent crash is noticed before a call."""
PING_TIMEOUT = 5.0


class Breaker(Protocol):
    """The circuit breaker a supervisor uses (`recovery.budget.CircuitBreaker` fits)."""

    @property
    def reopens_in(self) -> float: ...

    @property
    def failures(self) -> int: ...

    def allows(self) -> bool: ...

    def record_success(self) -> bool: ...

    def record_failure(self) -> bool: ...


class ServerState(StrEnum):
    """Where a server stands, as ``/mcp`` shows it."""

    STARTING = "starting"
    READY = "ready"
    RESTARTING = "restarting"
    PAUSED = "paused"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server; ``retry_at`` is a `time.time()` value."""

    name: str
    state: ServerState
    tools: tuple[RemoteTool, ...] = ()
    reason: str = ""
    retry_at: float | None = None
    failures: int = 0

    def describe(self, now: float | None = None) -> str:
        """``ready, 3 tools`` / ``restarting in 4s (crashed ...)`` / ``failed: reason``."""
        now = time.time() if now is None else now
        if self.state is ServerState.READY:
            return f"ready, {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        if self.state in (ServerState.RESTARTING, ServerState.PAUSED) and self.retry_at:
            wait = round(self.retry_at - now)
            verb = "restarting" if self.state is ServerState.RESTARTING else "paused, next try"
            when = f"in {wait}s" if wait >= 1 else "now"
            return f"{verb} {when} ({self.reason})"
        if self.state is ServerState.STARTING and self.reason:
            return f"starting again (last try: {self.reason})"
        if self.reason:
            return f"{self.state.value}: {self.reason}"
        return self.state.value


class Unavailable(Exception):
    """The server cannot take calls now; the message tells the model until when."""


class CallTimedOut(Exception):
    """A call got no answer within ``call_timeout``; ``hung`` if the server was restarted."""

    def __init__(self, timeout: float, *, hung: bool) -> None:
        super().__init__(f"no answer within {timeout:g}s")
        self.timeout = timeout
        self.hung = hung


Launch = Callable[[], AbstractAsyncContextManager[Connection]]


@dataclass
class _Watch:
    """Wakes everyone waiting for a state change."""

    changed: anyio.Event = field(default_factory=anyio.Event)

    def notify(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


class ServerSupervisor:
    """Runs one server for the whole session and answers calls to its tools."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        *,
        launch: Launch,
        breaker: Breaker,
        last_stderr: Callable[[], str] = lambda: "",
        jitter: Callable[[], float] = random.random,
        on_change: Callable[[ServerStatus], None] = lambda status: None,
    ) -> None:
        self.name = name
        self._on_change = on_change
        self.settings = settings
        self._launch = launch
        self._breaker = breaker
        self._last_stderr = last_stderr
        self._jitter = jitter
        self._connection: Connection | None = None
        self._watch = _Watch()
        self.status = ServerStatus(name, ServerState.STARTING)
        self._running = anyio.CancelScope()

    def stop(self) -> None:
        """End `run` (from the servers' thread). Unlike cancelling its task, this lets the
        SDK finish stopping the server, which it shields from cancellation: a task
        cancellation breaks through the shield and left it waiting for ever."""
        self._running.cancel()

    async def run(self) -> None:
        """Keep the server up until cancelled or stopped."""
        with self._running:
            await self._keep_up()

    async def _keep_up(self) -> None:
        try:
            while True:
                if not self._breaker.allows():
                    await self._wait(ServerState.PAUSED, self._breaker.reopens_in)
                    continue
                self._set(ServerState.STARTING)  # the last failure's reason stays, to show
                reason = await self._serve_once()
                opened = self._breaker.record_failure()
                log.warning("mcp_server_down", server=self.name, reason=reason, paused=opened)
                if opened:
                    reason = f"{reason}; paused after {self._breaker.failures} failures in a row"
                    await self._wait(ServerState.PAUSED, self._breaker.reopens_in, reason)
                else:
                    delay = restart_delay(self._breaker.failures, self._jitter())
                    await self._wait(ServerState.RESTARTING, delay, reason)
        finally:
            self._connection = None
            self.status = ServerStatus(self.name, ServerState.STOPPED, self.status.tools)
            self._watch.notify()

    def fail(self, reason: str) -> None:
        """Mark the server failed for good (it will not be started)."""
        self._set(ServerState.FAILED, reason=reason)

    async def _serve_once(self) -> str:
        """Start the server and watch it until it breaks; return why it ended."""
        timed_out = False
        reason = "the connection ended"
        try:
            async with anyio.create_task_group() as group:

                async def start_deadline() -> None:
                    nonlocal timed_out
                    await anyio.sleep(self.settings.start_timeout)
                    if self._connection is None:
                        timed_out = True
                        group.cancel_scope.cancel()

                group.start_soon(start_deadline)
                async with self._launch() as connection:
                    self._connection = connection
                    self._set(ServerState.READY, tools=tuple(connection.tools), reason="")
                    log.info("mcp_server_ready", server=self.name, tools=len(connection.tools))
                    await _watch_health(connection, self._breaker.record_success)
                    reason = connection.reason
                group.cancel_scope.cancel()
        except Exception as error:
            reason = _reason(error)
        finally:
            self._connection = None
        if timed_out:
            reason = f"it did not start within {self.settings.start_timeout:g}s"
        stderr = self._last_stderr()
        return f"{reason} (its last message: {stderr})" if stderr else reason

    async def _wait(self, state: ServerState, delay: float, reason: str | None = None) -> None:
        self._set(state, reason=reason, retry_at=time.time() + delay)
        await anyio.sleep(delay)

    def _set(
        self,
        state: ServerState,
        *,
        reason: str | None = None,
        tools: tuple[RemoteTool, ...] | None = None,
        retry_at: float | None = None,
    ) -> None:
        old = self.status
        self.status = ServerStatus(
            self.name,
            state,
            old.tools if tools is None else tools,
            old.reason if reason is None else reason,
            retry_at,
            self._breaker.failures,
        )
        self._watch.notify()
        self._on_change(self.status)

    async def call(self, tool: str, arguments: dict[str, Any]) -> Reply:
        """Call ``tool`` on the server.

        Raises:
            Unavailable: the server is down; the message says until when.
            ServerBroken: it crashed or broke during the call (it is being restarted).
            CallTimedOut: no answer within ``call_timeout``.
            BadReply: the answer was malformed.
        """
        connection = await self._ready_connection()
        try:
            with anyio.fail_after(self.settings.call_timeout):
                reply = await connection.call(tool, arguments)
        except TimeoutError:
            hung = not await _answers_ping(
                connection, min(PING_TIMEOUT, self.settings.call_timeout)
            )
            if hung:
                connection.mark_broken(
                    f"it stopped answering (no reply to a call within "
                    f"{self.settings.call_timeout:g}s, nor to a ping)"
                )
            raise CallTimedOut(self.settings.call_timeout, hung=hung) from None
        self._breaker.record_success()
        return reply

    async def _ready_connection(self) -> Connection:
        """The live connection, waiting while the server (re)starts soon enough."""
        with anyio.move_on_after(self.settings.start_timeout + FIRST_RESTART_DELAY * 4):
            while True:
                connection = self._connection
                if connection is not None and not connection.broken.is_set():
                    return connection
                if not self._worth_waiting():
                    break
                await self._watch.changed.wait()
        raise Unavailable(self.unavailable_text())

    def _worth_waiting(self) -> bool:
        status = self.status
        if status.state in (ServerState.STARTING, ServerState.READY):
            return True
        if status.state is ServerState.RESTARTING and status.retry_at is not None:
            return status.retry_at - time.time() < self.settings.start_timeout
        return False

    def unavailable_text(self) -> str:
        """Which tools are unavailable, why, and until when, for the model."""
        status = self.status
        names = ", ".join(tool.name for tool in status.tools) or "all of them"
        why = f" ({status.reason})" if status.reason else ""
        if status.state is ServerState.STARTING:
            why = f" again (last try: {status.reason})" if status.reason else ""
            until = f"until it has started (it may take up to {self.settings.start_timeout:g}s)"
        elif status.state is ServerState.FAILED or status.retry_at is None:
            until = "until the person fixes it and restarts agent"
        else:
            clock = time.strftime("%H:%M:%S", time.localtime(status.retry_at))
            wait = max(1, round(status.retry_at - time.time()))
            until = f"until about {clock} (in {wait}s), when it is tried again"
        return (
            f"MCP server {self.name!r} is {status.state.value}{why}. Its tools ({names}) are "
            f"unavailable {until}. Continue without them, or tell the person."
        )


def restart_delay(failures: int, jitter: float) -> float:
    """Capped exponential backoff with jitter in the upper half (never zero)."""
    base = min(MAX_RESTART_DELAY, FIRST_RESTART_DELAY * 2.0 ** max(0, failures - 1))
    return base * (0.5 + jitter / 2)


async def _watch_health(connection: Connection, healthy: Callable[[], object]) -> None:
    """Return once the connection is broken; ping it when idle to notice a silent crash.

    A server that still answers a ping after a health interval is ``healthy``: its earlier
    failures are no longer "in a row" (a crash each start is; one a day is not).
    """
    while not connection.broken.is_set():
        with anyio.move_on_after(HEALTH_INTERVAL):
            await connection.broken.wait()
        if connection.broken.is_set():
            break
        if await _answers_ping(connection):
            healthy()
        else:
            connection.mark_broken(connection.reason or "it stopped answering pings")


async def _answers_ping(connection: Connection, within: float = PING_TIMEOUT) -> bool:
    with anyio.move_on_after(within):
        try:
            await connection.ping()
        except ServerBroken:
            return False
        return True
    return False


def _reason(error: BaseException) -> str:
    """The most telling message in ``error`` (which may be an exception group)."""
    if isinstance(error, BaseExceptionGroup):
        found = [_reason(inner) for inner in error.exceptions]
        return found[0] if found else "the connection failed"
    if isinstance(error, ServerBroken):
        return str(error)
    if isinstance(error, OSError):
        return f"it could not be started or reached ({error.strerror or error})"
    text = str(error).strip().splitlines()
    return f"it failed ({type(error).__name__}{': ' + text[0] if text else ''})"
