"""``agent sessions`` and ``/sessions``: a table of saved sessions."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent.exit_codes import ExitCode
from agent.setup.startup import Options, SetupError, boot
from agent.terminal.console import SafeConsole, visible
from sessions import SessionError, SessionStore, SessionSummary, started_in

COLUMNS = ("id", "updated", "directory", "first prompt", "msgs", "ended")


def render_sessions(
    console: Console, summaries: Sequence[SessionSummary], *, cwd: Path, all_dirs: bool = False
) -> None:
    """Print one row per session: id, when, directory, first prompt, messages, how it ended."""
    if not summaries:
        where = "" if all_dirs else f" in {cwd}"
        hint = "" if all_dirs else " (use --all to see every directory)"
        console.print(f"No saved sessions{where}{hint}.")
        return
    rows = [
        (
            summary.id,
            _when(summary.updated),
            _short_dir(summary.cwd, cwd),
            summary.first_prompt.replace("\n", " ")[:60],
            str(summary.message_count),
            str(summary.ended),
        )
        for summary in summaries
    ]
    if not console.is_terminal:
        # Piped: one tab-separated line per session, for scripts.
        for row in [COLUMNS, *rows]:
            console.file.write("\t".join(visible(cell).replace("\t", " ") for cell in row) + "\n")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in COLUMNS:
        table.add_column(column, no_wrap=column != "first prompt", overflow="ellipsis")
    for row in rows:
        # Prompts and paths are the person's text, never rich markup.
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    console.print("[dim]Resume with: agent --resume <id> (any unique prefix)[/dim]")


def list_sessions(cwd: Path, *, all_dirs: bool, limit: int) -> int:
    """``agent sessions``; returns the exit code."""
    no_color = bool(os.environ.get("NO_COLOR"))
    console = SafeConsole(no_color=no_color, highlight=False)
    try:
        listed = SessionStore(boot(Options(workspace=cwd)).home).list()
    except (SetupError, SessionError) as error:
        errors = SafeConsole(stderr=True, no_color=no_color, highlight=False, soft_wrap=True)
        errors.print(f"agent: {error}", style="red", markup=False)
        return ExitCode.USAGE
    summaries = [s for s in listed if all_dirs or started_in(s, str(cwd))]
    render_sessions(console, summaries[:limit], cwd=cwd, all_dirs=all_dirs)
    return ExitCode.OK


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def _short_dir(path: str, cwd: Path) -> str:
    if Path(path) == cwd:
        return "."
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home) else path
