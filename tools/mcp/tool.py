"""MCP server tools as `Tool`s: ``mcp__<server>__<tool>``, with the server's own schema.

Failures are worded for the model. Only calls the server marks ``readOnlyHint`` or
``idempotentHint`` are retried after the server crashed (the executor retries a transient
`ToolError` of an idempotent tool); any other call's effect is unknown after a failure,
so it is reported and never repeated. Every MCP tool needs the approval of a command: a
server's ``readOnlyHint`` is its own claim, not the person's (an allow rule such as
``mcp__server__tool`` is how the person says it may run unasked).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from tools.base import ErrorCategory, Tool, ToolContext, ToolError, ToolOutput
from tools.mcp.connection import BadReply, MalformedOutput, RemoteTool, ServerBroken
from tools.mcp.runtime import McpServers
from tools.mcp.supervisor import CallTimedOut, ServerState, Unavailable
from tools.settings import ToolSettings

PREFIX = "mcp__"
MAX_NAME = 64
"""The longest tool name the vendors accept."""
MAX_DESCRIPTION = 2_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_RESTART_GRACE = 15.0


class McpArguments(BaseModel):
    """Any JSON object: the server validates the arguments against its own schema."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, made safe for every vendor and at most 64 characters."""
    name = f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


class McpTool(Tool[McpArguments]):
    """One tool of one MCP server. Made per tool by `mcp_tool` (identity is class-level)."""

    input_model: ClassVar[type[BaseModel]] = McpArguments
    server: ClassVar[str]
    remote: ClassVar[RemoteTool]

    def __init__(self, servers: McpServers, call_timeout: float, start_timeout: float) -> None:
        self._servers = servers
        # The server's own timeouts decide; this is the backstop if a cross-thread wait hangs.
        self._backstop = call_timeout + start_timeout + _RESTART_GRACE

    def input_schema(self) -> dict[str, Any]:
        schema = dict(self.remote.input_schema)
        schema.setdefault("type", "object")
        return schema

    def timeout(self, args: McpArguments, settings: ToolSettings) -> float:
        return self._backstop

    def summary(self, args: McpArguments) -> str:
        shown = json.dumps(args.model_dump(), ensure_ascii=False)
        return f"{self.name} {shown[:200]}"

    def details(self, args: McpArguments, ctx: ToolContext) -> str:
        hints = "the server says it only reads" if self.remote.read_only else "may change things"
        arguments = json.dumps(args.model_dump(), ensure_ascii=False, indent=2)
        return f"MCP server {self.server!r}, tool {self.remote.name!r} ({hints})\n{arguments}"

    async def run(self, args: McpArguments, ctx: ToolContext) -> ToolOutput:
        try:
            reply = await self._servers.call(self.server, self.remote.name, args.model_dump())
        except Unavailable as error:
            return ToolOutput(str(error), is_error=True)
        except BadReply as error:
            return ToolOutput(
                f"MCP server {self.server!r} answered {self.remote.name} with a malformed "
                f"result ({error}). The call may or may not have taken effect.",
                is_error=True,
            )
        except MalformedOutput as error:
            return self._lost(f"broke during the call: {error}; it is being restarted")
        except ServerBroken as error:
            return self._lost(f"broke during the call: {error}", retry=self.idempotent)
        except CallTimedOut as error:
            if not error.hung:
                return ToolOutput(
                    f"{self.name} got no answer within {error.timeout:g}s (the server is still "
                    "running, so the call may yet finish). Ask for less at once, or continue "
                    "without it.",
                    is_error=True,
                )
            return self._lost(f"stopped answering ({error}) and is being restarted")
        return ToolOutput(reply.text, is_error=reply.is_error)

    def _lost(self, what: str, *, retry: bool = False) -> ToolOutput:
        """A call the server broke during: retried only if it crashed and the tool is safe.

        A hang or malformed output would most likely happen again, so like our own tools'
        timeouts, those calls are not repeated.
        """
        message = f"MCP server {self.server!r} {what}"
        if retry:
            raise ToolError(message, category=ErrorCategory.TRANSIENT)
        if self.idempotent:
            return ToolOutput(
                f"{message}. Calling it again is safe but may fail the same way.", True
            )
        return ToolOutput(
            f"{message}. {self.remote.name} may change things, so it was not retried and its "
            "effect is unknown: check before calling it again.",
            is_error=True,
        )


def mcp_tool(
    servers: McpServers, server: str, remote: RemoteTool, call_timeout: float, start: float
) -> McpTool:
    """The `McpTool` for ``remote`` of ``server``."""
    description = remote.description.strip() or f"The {remote.name} tool."
    attributes = {
        "name": tool_name(server, remote.name),
        "description": f"[MCP server {server}] {description}"[:MAX_DESCRIPTION],
        "kind": "command",
        "idempotent": remote.idempotent,
        "server": server,
        "remote": remote,
    }
    cls = type(f"McpTool_{server}_{remote.name}", (McpTool,), attributes)
    tool: McpTool = cls(servers, call_timeout, start)
    return tool


class McpToolList:
    """The tools of every server that has ever been ready, rebuilt only when a list changes.

    A server that is down keeps its tools on the list: calling one tells the model until
    when it is unavailable, which is more use to it than a tool that silently vanished.
    """

    def __init__(self, servers: McpServers) -> None:
        self._servers = servers
        self._built: dict[str, tuple[tuple[RemoteTool, ...], list[McpTool]]] = {}

    def __call__(self) -> list[McpTool]:
        found: list[McpTool] = []
        for status in self._servers.statuses():
            if status.state is ServerState.FAILED or not status.tools:
                continue
            cached = self._built.get(status.name)
            if cached is None or cached[0] != status.tools:
                entry = self._servers.settings(status.name)
                call, start = entry.call_timeout, entry.start_timeout
                tools = [mcp_tool(self._servers, status.name, r, call, start) for r in status.tools]
                cached = (status.tools, tools)
                self._built[status.name] = cached
            found += cached[1]
        return found
