"""``/agents``: the sub-agent kinds, where each came from, the files skipped and why;
``/agents allow NAME`` lets a project's file's ``permissionMode`` hold."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent.setup.config import agent_home
from agent.subagents import AgentCatalog, SubagentType
from agent.terminal.allow_view import AllowHost, ask_to_allow, home_of, list_or_allow


async def agents_command(host: AllowHost, arg: str) -> bool:
    """Run ``/agents [allow NAME]``; always True (the REPL goes on)."""
    catalog = _catalog(host.workspace, host.environ)
    listing = partial(agents_listing, catalog)
    return await list_or_allow(host, "agents", arg, listing, partial(_allow, host, catalog))


def agent_choices(host: AllowHost) -> list[tuple[str, str]]:
    """Tab completion after ``/agents``: ``allow NAME`` for each project kind waiting."""
    catalog = _catalog(host.workspace, host.environ)
    return [
        (f"allow {kind.name}", f"let its permissionMode {kind.permission_mode} hold")
        for kind in catalog.kinds.values()
        if catalog.needs_trust(kind)
    ]


def agents_listing(catalog: AgentCatalog) -> RenderableType:
    """Each kind with where it came from, its tools, model and mode; then the hidden and
    the skipped files."""
    table = Table(box=None, show_header=True, pad_edge=False)
    for column in ("sub-agent", "from", "description"):
        table.add_column(column, overflow="fold")
    for kind in catalog.kinds.values():
        where = Text(f"{kind.scope}: {kind.source}" if kind.source else "built in")
        if details := _details(kind):
            where.append(f"\n{details}", style="dim")
        if catalog.needs_trust(kind):
            where.append(
                f"\npermissionMode not in force until allowed: /agents allow {kind.name}",
                style="yellow",
            )
        table.add_row(Text(kind.name, style="bold"), where, Text(kind.description))
    parts: list[RenderableType] = [table]
    for kind in catalog.found.shadowed:
        kept = catalog.kinds[kind.name]
        parts.append(Text(f"{kind.source}: hidden by {kind.name} from {kept.source}", style="dim"))
    for problem in catalog.found.problems:
        parts.append(Text(problem, style="yellow"))
    parts.append(
        Text(
            "Define one in a Markdown file in .claude/agents/ or .agent/agents/ (this project), "
            "~/.claude/agents/ or AGENT_HOME/agents/ (yours): see docs/subagents.md.",
            style="dim",
        )
    )
    return Group(*parts)


def _details(kind: SubagentType) -> str:
    said = []
    if kind.tools is not None:
        said.append(f"tools: {', '.join(sorted(kind.tools)) or 'none'}")
    if kind.model is not None:
        said.append(f"model: {kind.model}")
    if kind.permission_mode is not None:
        said.append(f"permissionMode: {kind.permission_mode}")
    if kind.max_turns is not None:
        said.append(f"maxTurns: {kind.max_turns}")
    return "; ".join(said)


async def _allow(host: AllowHost, catalog: AgentCatalog, name: str) -> None:
    kind = catalog.kinds.get(name)
    if kind is None:
        known = ", ".join(sorted(catalog.kinds))
        host.show(Text(f"No sub-agent named {name}. The kinds: {known}.", style="yellow"))
        return
    if not catalog.needs_trust(kind):
        host.show(Text(f"{name} needs no allowing: {_why_not(kind)}.", style="dim"))
        return
    question = (
        f"{kind.name} ({kind.source}) is the project's file. Its permissionMode "
        f"{kind.permission_mode} lets this sub-agent "
        f"{'edit files' if kind.permission_mode == 'acceptEdits' else 'run every tool'} "
        "without asking you (your rules and the sandbox still hold). Allow it in this "
        "project? [y/N] "
    )
    await ask_to_allow(host, name, question, partial(catalog.trust, kind), "it asks as usual")


def _catalog(workspace: Path, environ: Mapping[str, str]) -> AgentCatalog:
    """The kinds as they are on disk now (the home directories from ``environ``)."""
    home = home_of(environ)
    return AgentCatalog(workspace, agent_home(environ), home)


def _why_not(kind: SubagentType) -> str:
    if kind.scope == "built-in":
        return "it is built in"
    if kind.scope == "user":
        return "it is your own file"
    if not kind.loosens:
        return "its file asks for nothing looser"
    return "it is allowed already"
