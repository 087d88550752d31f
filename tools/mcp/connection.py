"""One live connection to an MCP server: the only module that imports the MCP SDK.

`open_connection` starts (or reaches) the server, initialises the session and lists its
tools; the `Connection` it yields calls tools and answers pings. SDK exceptions are turned
into `ServerBroken` (the connection is unusable: crashed, closed, sent malformed output)
or `BadReply` (this one answer was malformed) here, so nothing above knows the SDK's types.
Results become text the model can read: images and binary resources are described, not
inlined.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio

from tools.mcp.settings import McpServerSettings

CLIENT_NAME = "agent"


class ServerBroken(Exception):
    """The connection cannot be used any more; the message says why, for the model."""


class MalformedOutput(ServerBroken):
    """The server wrote something that is not JSON-RPC into the stream; it is restarted."""


class BadReply(Exception):
    """The server answered one call with something that is not a valid result."""


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    idempotent: bool


@dataclass(frozen=True)
class Reply:
    """A tool's answer as text, and whether the server marked it an error."""

    text: str
    is_error: bool


class Connection:
    """A session with one server. ``broken`` is set once it must be thrown away."""

    def __init__(self, session: Any, tools: list[RemoteTool]) -> None:
        self._session = session
        self.tools = tools
        self.broken = anyio.Event()
        self.reason = ""
        self.malformed = False

    def mark_broken(self, reason: str, *, malformed: bool = False) -> None:
        """Note why the connection is unusable (the first reason wins) and wake its owner."""
        if not self.broken.is_set():
            self.reason = reason
            self.malformed = malformed
            self.broken.set()

    def _broken(self) -> ServerBroken:
        return MalformedOutput(self.reason) if self.malformed else ServerBroken(self.reason)

    async def call(self, name: str, arguments: dict[str, Any]) -> Reply:
        """Call tool ``name``; raises `ServerBroken` or `BadReply`."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
        from pydantic import ValidationError

        if self.broken.is_set():
            raise self._broken()
        try:
            result = await self._session.call_tool(name, arguments)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED or self.broken.is_set():
                self.mark_broken("the server closed the connection (it crashed)")
                raise self._broken() from None
            return Reply(f"the server refused the call: {error.error.message}", True)
        except (ValidationError, RuntimeError) as error:
            raise BadReply(_first_line(error)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as error:
            self.mark_broken(f"the connection to the server was lost ({error!r})")
            raise self._broken() from None
        return Reply(reply_text(result.content, result.structured_content), bool(result.is_error))

    async def ping(self) -> None:
        """Raises `ServerBroken` unless the server answers a ping."""
        try:
            await self._session.send_ping()
        except Exception as error:
            self.mark_broken(self.reason or f"the server stopped answering ({_first_line(error)})")
            raise ServerBroken(self.reason) from None


@asynccontextmanager
async def open_connection(
    settings: McpServerSettings, *, argv: list[str] | None, cwd: Path, errlog: TextIO
) -> AsyncIterator[Connection]:
    """Start or reach the server, initialise, list its tools, and yield the connection.

    Args:
        settings: The server's entry, with ``${VAR}`` references already resolved.
        argv: The stdio server's full command line (the sandbox launcher first, if any).
        cwd: Where a stdio server runs when its entry names no ``cwd``.
        errlog: Receives a stdio server's stderr.

    Raises:
        ServerBroken: it could not be started or did not speak MCP.
    """
    async with _transport(settings, argv, cwd, errlog) as (read, write):
        broken: list[str] = []
        starting = anyio.CancelScope()

        async def on_message(message: Any) -> None:
            # The SDK hands over what it could not parse, and goes on reading: the server
            # is not closed, so without this a server printing garbage would seem fine.
            if isinstance(message, Exception):
                broken.append(f"the server wrote malformed output ({_unparsed(message)})")
                if connection is not None:
                    connection.mark_broken(broken[0], malformed=True)
                else:
                    starting.cancel()  # a start would wait for its timeout in vain

        connection: Connection | None = None
        from mcp.client.session import ClientSession
        from mcp_types import Implementation

        info = Implementation(name=CLIENT_NAME, version="1")
        async with ClientSession(read, write, message_handler=on_message, client_info=info) as s:
            with starting:
                try:
                    await s.initialize()
                    tools = await _list_tools(s)
                except Exception as error:
                    raise ServerBroken(_start_problem(error)) from None
            if broken:
                raise MalformedOutput(broken[0])
            connection = Connection(s, tools)
            yield connection


@asynccontextmanager
async def _transport(
    settings: McpServerSettings, argv: list[str] | None, cwd: Path, errlog: TextIO
) -> AsyncIterator[tuple[Any, Any]]:
    if argv is not None:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=settings.env or None, cwd=settings.cwd or cwd
        )
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams
        except OSError as error:
            raise ServerBroken(f"cannot start {settings.command}: {error}") from None
        return
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers=settings.headers or None)
    async with client, streamable_http_client(str(settings.url), http_client=client) as streams:
        yield streams


async def _list_tools(session: Any) -> list[RemoteTool]:
    from mcp_types import PaginatedRequestParams

    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever must not hang the start
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        tools += [_remote_tool(tool) for tool in listing.tools]
        cursor = listing.next_cursor
        if not cursor:
            break
    return tools


def _remote_tool(tool: Any) -> RemoteTool:
    hints = tool.annotations
    return RemoteTool(
        name=tool.name,
        description=tool.description or tool.title or "",
        input_schema=dict(tool.input_schema or {"type": "object"}),
        read_only=bool(hints and hints.read_only_hint),
        idempotent=bool(hints and (hints.read_only_hint or hints.idempotent_hint)),
    )


def reply_text(content: list[Any], structured: Any) -> str:
    """The model-facing text of a result's content blocks (structured content if none)."""
    parts = [_block_text(block) for block in content]
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    return "\n".join(parts) if parts else "(the tool returned no content)"


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        return f"[{kind} {block.mime_type}, about {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {block.uri}{f': {block.description}' if block.description else ''}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        size = len(getattr(resource, "blob", "")) * 3 // 4
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'}, {size} bytes)]"
    return f"[{kind or 'unknown'} content, not shown]"


def _start_problem(error: BaseException) -> str:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        return "it exited or closed the connection while starting"
    if isinstance(error, MCPError):
        return f"the server refused to start a session: {error.error.message}"
    return f"the server did not complete the MCP handshake ({_first_line(error)})"


def _unparsed(error: Exception) -> str:
    """What the server wrote that is not a JSON-RPC message, quoted and cut short."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError) and error.errors():
        found = error.errors()[0].get("input")
        if isinstance(found, str | bytes):
            text = found.decode(errors="replace") if isinstance(found, bytes) else found
            shown = repr(text[:80]) + ("..." if len(text) > 80 else "")
            return f"not JSON-RPC: {shown}"
    return _first_line(error)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
