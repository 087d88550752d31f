"""``/bashes``: the background commands the model started, and stopping one."""

from __future__ import annotations

import time

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent.terminal.status_line import duration_text
from tools.background import BackgroundShell, BackgroundShells

USAGE = "Usage: /bashes lists the background commands; /bashes kill ID stops one."


async def bashes(shells: BackgroundShells, arg: str) -> RenderableType:
    """What ``/bashes [kill ID]`` shows: the list, or how the stop went."""
    words = arg.split()
    if not words:
        return bashes_table(shells.listing())
    if words[0] != "kill" or len(words) != 2:
        return Text(USAGE, style="yellow")
    shell = shells.get(words[1])
    if shell is None:
        known = ", ".join(shells.ids) or "none"
        return Text(f"No background command {words[1][:60]!r} (started: {known}).", "yellow")
    if not shell.running:
        return Text(f"{shell.id} is not running: {shell.status()}.", style="dim")
    return Text(f"{shell.id} {await shells.stop(shell, '/bashes')}.")


def bashes_table(listed: list[BackgroundShell], now: float | None = None) -> RenderableType:
    """One row per command: id, status, how long it has run, the command."""
    if not listed:
        return Text("No background commands in this session.", style="dim")
    now = time.monotonic() if now is None else now
    table = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
    for name in ("id", "status", "for", "command"):
        table.add_column(name, overflow="ellipsis", no_wrap=name != "command")
    for shell in listed:
        status = shell.status()
        style = "green" if status == "running" else "dim"
        first = shell.command.strip().splitlines()[0] if shell.command.strip() else ""
        ran = duration_text(now - shell.started) if status == "running" else ""
        table.add_row(shell.id, Text(status, style=style), ran, first[:200])
    return Group(table, Text("/bashes kill ID stops one.", style="dim"))
