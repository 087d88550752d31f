"""Configuration of MCP servers: the ``mcp_servers:`` section and a project's ``.mcp.json``.

A server is either a local program spoken to over stdio (``command``, ``args``, ``env``,
``cwd``) or a remote endpoint spoken to over Streamable HTTP (``url``, ``headers``).
Values may reference environment variables as ``${NAME}`` or ``${NAME:-default}``, so
tokens stay out of the file. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UnsetVariable(ValueError):
    """A value references an environment variable that is not set and has no default."""


class McpServerSettings(BaseModel):
    """One entry of ``mcp_servers:``: how to reach the server and how long to wait for it."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(default=None, description="Program of a stdio server.")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Extra environment (${VAR} references allowed)."
    )
    cwd: str | None = Field(default=None, description="Its working directory (default: workspace).")
    url: str | None = Field(default=None, description="Endpoint of a Streamable HTTP server.")
    headers: dict[str, str] = Field(
        default_factory=dict, description="HTTP headers, e.g. Authorization: Bearer ${TOKEN}."
    )
    enabled: bool = Field(default=True, description="false: keep the entry but do not start it.")
    sandbox: bool = Field(
        default=True,
        description="false: run this stdio server outside the command sandbox (it can write "
        "anywhere you can).",
    )
    start_timeout: float = Field(default=30.0, gt=0, description="Seconds to start and list tools.")
    call_timeout: float = Field(default=60.0, gt=0, description="Seconds one tool call may take.")
    max_failures: int = Field(
        default=5,
        ge=1,
        description="Failures in a row (start, crash, hang) before the server is paused.",
    )
    pause: float = Field(
        default=60.0, gt=0, description="Seconds a paused server waits before one more try."
    )

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (an HTTP server)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, not {self.url!r}")
        return self

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """What the person sees when asked to allow the server: its command line or URL."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)

    def resolved(self, environ: Mapping[str, str]) -> McpServerSettings:
        """A copy with ``${VAR}`` references in env, headers, args, url and cwd replaced.

        Raises:
            UnsetVariable: a referenced variable is not set and has no default.
        """
        return self.model_copy(
            update={
                "env": {key: expand(value, environ) for key, value in self.env.items()},
                "headers": {key: expand(value, environ) for key, value in self.headers.items()},
                "args": [expand(arg, environ) for arg in self.args],
                "url": expand(self.url, environ) if self.url else None,
                "cwd": expand(self.cwd, environ) if self.cwd else None,
            }
        )


def expand(value: str, environ: Mapping[str, str]) -> str:
    """``value`` with ``${NAME}`` and ``${NAME:-default}`` replaced from ``environ``."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:
            return found
        if default is not None:
            return default
        raise UnsetVariable(f"environment variable {name} is not set")

    return _REFERENCE.sub(replace, value)


def check_server_names(servers: Mapping[str, Any]) -> None:
    """Raise ValueError for a server name the tool names cannot carry."""
    for name in servers:
        if not SERVER_NAME.match(name):
            raise ValueError(
                f"MCP server name {name!r} may use only letters, digits, _ and - "
                "(at most 32 characters)"
            )
