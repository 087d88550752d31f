"""What the REPL prints as it starts, and after ``/resume``: the version, model and workspace,
the start's notices, the sandbox, the project's instructions, and a resumed session's last
exchange with what the person should know about it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text

from agent import __version__
from agent.app import Agent
from agent.engine.system_prompt import instructions_file
from agent.setup.model_chain import EMBEDDED_MODEL
from agent.terminal.banners import notice_line
from agent.terminal.repl_view import last_exchange, typed_by_person
from agent.terminal.setup_view import local_server_line

STOPPED_MID_TURN = (
    "This session stopped mid-turn. Press Enter to continue it, or type a new instruction."
)


def greeting(
    agent: Agent, workspace: Path, width: int, pending: Callable[[], bool]
) -> list[RenderableType]:
    """The lines the REPL starts with; ``pending``: whether a resumed turn is unfinished."""
    head = Text.assemble(
        ("agent ", "bold"), (__version__, "dim"), f" · {agent.model} · ", (str(workspace), "dim")
    )
    lines: list[RenderableType] = [head, *(notice_line(notice) for notice in agent.notices)]
    if agent.model == EMBEDDED_MODEL:  # name a running local server that could do the work
        lines.append(local_server_line())
    lines.append(Text(f"Sandbox: {agent.sandbox.describe()}", style="dim"))
    if found := instructions_file(workspace):
        lines.append(Text(f"Project instructions: {found[0]}", style="dim"))
    lines += resumed_lines(agent, width, pending)
    lines.append(Text("Type a request · /help for commands · Ctrl-D to exit", style="dim"))
    return lines


def resumed_lines(agent: Agent, width: int, pending: Callable[[], bool]) -> list[RenderableType]:
    """A resumed session's last exchange, its warnings, and whether it stopped mid-turn."""
    loaded = agent.loaded
    if loaded is None:
        return []
    lines: list[RenderableType] = []
    if exchange := loaded.last_exchange(typed_by_person):
        lines += [Text("Last exchange:", style="dim"), last_exchange(exchange, width)]
    lines += [Text(f"! {warning}", style="yellow") for warning in agent.resume_notices()]
    if pending():
        lines.append(Text(STOPPED_MID_TURN, style="yellow"))
    return lines
