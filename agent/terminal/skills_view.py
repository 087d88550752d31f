"""``/skills``: the skills found, where each came from, and the files that were skipped;
``/skills allow NAME`` lets a project's skill's ``allowed-tools`` hold."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agent.setup.config import agent_home
from agent.setup.skill_link import SkillLink
from agent.terminal.allow_view import AllowHost, ask_to_allow, home_of, list_or_allow
from providers import Event
from tools.skills import Skill


async def skills_command(host: AllowHost, arg: str) -> bool:
    """Run ``/skills [allow NAME]``; always True (the REPL goes on)."""
    link = _link(host.workspace, host.environ)
    listing = partial(skills_listing, link)
    return await list_or_allow(host, "skills", arg, listing, partial(_allow, host, link))


def skill_choices(host: AllowHost) -> list[tuple[str, str]]:
    """Tab completion after ``/skills``: ``allow NAME`` for each project skill waiting."""
    link = _link(host.workspace, host.environ)
    return [
        (f"allow {skill.name}", "let its allowed-tools hold")
        for skill in link.catalog.skills.values()
        if link.needs_trust(skill)
    ]


def skills_listing(link: SkillLink) -> RenderableType:
    """Each skill with its scope, file and allowed-tools; then the shadowed and skipped."""
    catalog = link.catalog
    parts: list[RenderableType] = []
    if catalog.skills:
        table = Table(box=None, show_header=True, pad_edge=False)
        for column in ("skill", "from", "description"):
            table.add_column(column, overflow="fold")
        for skill in catalog.skills.values():
            where = Text(f"{skill.scope}: {skill.path}")
            if skill.allowed_tools:
                where.append(f"\nallowed-tools: {', '.join(link.rules(skill))}", style="dim")
                if link.needs_trust(skill):
                    where.append(
                        f"\nnot in force until allowed: /skills allow {skill.name}", style="yellow"
                    )
            table.add_row(Text(skill.name, style="bold"), where, Text(skill.description))
        parts.append(table)
    else:
        parts.append(
            Text(
                "No skills. A skill is a folder with a SKILL.md in .claude/skills/ or "
                ".agent/skills/ (this project), ~/.claude/skills/ or AGENT_HOME/skills/ (yours).",
                style="dim",
            )
        )
    for skill in catalog.shadowed:
        kept = catalog.skills[skill.name]
        parts.append(Text(f"{skill.path}: hidden by {skill.name} from {kept.path}", style="dim"))
    for problem in catalog.problems:
        parts.append(Text(problem.describe(), style="yellow"))
    return Group(*parts)


async def _allow(host: AllowHost, link: SkillLink, name: str) -> None:
    skill = link.catalog.skills.get(name)
    if skill is None:
        known = ", ".join(sorted(link.catalog.skills)) or "none"
        host.show(Text(f"No skill named {name}. The skills: {known}.", style="yellow"))
        return
    if not link.needs_trust(skill):
        host.show(Text(f"{name} needs no allowing: {_why_not(skill)}.", style="dim"))
        return
    question = (
        f"{skill.name} ({skill.path}) is the project's content. While the model uses it, it "
        f"allows without asking: {', '.join(link.rules(skill))}. Allow it in this project? "
        "[y/N] "
    )
    await ask_to_allow(host, name, question, partial(link.trust, skill), "its tools ask as usual")


def _link(workspace: Path, environ: Mapping[str, str]) -> SkillLink:
    """The skills as they are on disk now (the home directories from ``environ``)."""
    home = home_of(environ)
    return SkillLink(workspace, home, agent_home(environ), None, _nowhere)


def _why_not(skill: Skill) -> str:
    if skill.scope == "user":
        return "it is your own skill"
    if not skill.allowed_tools:
        return "it allows no tools"
    return "it is allowed already"


def _nowhere(event: Event) -> None:
    """Listing loads no skill, so it has nothing to tell."""
