"""``agent mcp list`` and ``agent mcp approve``: the MCP servers from a shell.

Typer's sub-app only; the work is `agent.terminal.mcp_view`'s, imported when a command runs
so that ``agent --version`` pays nothing for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

mcp_cli = typer.Typer(
    help="MCP servers: their state, and allowing a project's .mcp.json servers.",
    no_args_is_help=True,
)


@mcp_cli.command("list")
def mcp_list(
    wait: Annotated[
        float | None,
        typer.Option(
            "--wait",
            min=0,
            metavar="SECONDS",
            help="Wait up to SECONDS for the servers to start before showing them (not on a "
            "terminal, the states are printed at once by default).",
        ),
    ] = None,
) -> None:
    """Start each configured MCP server and show its state (ready with N tools, starting, or
    why not); on a terminal the list updates as the servers come up or fail."""
    from agent.terminal.mcp_view import list_servers

    raise typer.Exit(list_servers(Path.cwd(), wait=wait))


@mcp_cli.command("approve")
def mcp_approve(
    names: Annotated[
        list[str] | None, typer.Argument(help="Servers to allow (default: all pending).")
    ] = None,
) -> None:
    """Allow servers this project's .mcp.json adds (needed before -p starts them)."""
    from agent.terminal.mcp_view import approve_servers

    raise typer.Exit(approve_servers(Path.cwd(), list(names or [])))
