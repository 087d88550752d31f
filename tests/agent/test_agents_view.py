"""``/agents``: the kinds and where each came from, broken files with path and line, and
``/agents allow NAME`` for a project's file that asks for a looser permissionMode; the same
problems in ``/doctor``."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console, RenderableType

from agent.subagents import AgentCatalog
from agent.terminal.agents_view import agent_choices, agents_command
from agent.terminal.allow_view import AllowHost
from agent.terminal.skills_view import skills_command


@dataclass
class Host:
    """Implements `AllowHost`: a workspace, a decoy home, scripted answers."""

    workspace: Path
    home: Path
    answers: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    console: Console = field(
        default_factory=lambda: Console(file=io.StringIO(), width=500, no_color=True)
    )

    @property
    def environ(self) -> Mapping[str, str]:
        return {"HOME": str(self.home), "AGENT_HOME": str(self.home / ".agent")}

    def show(self, renderable: RenderableType) -> None:
        self.console.print(renderable)

    async def ask(self, question: str) -> str:
        self.questions.append(question)
        return self.answers.pop(0)

    @property
    def output(self) -> str:
        file = self.console.file
        assert isinstance(file, io.StringIO)
        return file.getvalue()


def define(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text)
    return path


async def test_agents_lists_each_kind_with_its_origin_and_the_broken_files(
    workspace: Path, decoy_home: Path
) -> None:
    project = define(
        workspace / ".claude/agents",
        "reviewer",
        "---\nname: reviewer\ndescription: Reviews.\ntools: Read\nmodel: haiku\n---\n",
    )
    mine = define(
        decoy_home / ".claude/agents", "reviewer", "---\nname: reviewer\ndescription: Mine.\n---\n"
    )
    broken = define(
        workspace / ".agent/agents", "bad", "---\nname: bad\ndescription: d\ntools: Fly\n---\n"
    )
    host = Host(workspace, decoy_home)

    assert await agents_command(host, "")

    shown = host.output
    assert "general-purpose" in shown
    assert "built in" in shown
    assert f"project: {project}" in shown
    assert "tools: read_file; model: haiku" in shown
    assert f"{mine}: hidden by reviewer from {project}" in shown
    assert f"{broken}:4: unknown tool 'Fly' in 'tools'; skipped" in shown
    findings = AgentCatalog(workspace, decoy_home / ".agent", decoy_home).findings()
    assert [(f.level, f.detail) for f in findings] == [
        ("warning", f"{broken}:4: unknown tool 'Fly' in 'tools'; skipped")
    ]


async def test_agents_allow_lets_a_projects_looser_mode_hold(
    workspace: Path, decoy_home: Path
) -> None:
    define(
        workspace / ".claude/agents",
        "writer",
        "---\nname: writer\ndescription: Writes.\npermissionMode: acceptEdits\n---\n",
    )
    host = Host(workspace, decoy_home, answers=["n", "y"])

    assert agent_choices(host) == [("allow writer", "let its permissionMode acceptEdits hold")]
    assert await agents_command(host, "")
    assert "not in force until allowed: /agents allow writer" in host.output
    assert await agents_command(host, "allow writer")
    assert "writer not allowed" in host.output
    assert await agents_command(host, "allow writer")

    assert "edit files without asking you" in host.questions[0]
    assert "writer allowed" in host.output
    assert agent_choices(host) == []
    catalog = AgentCatalog(workspace, decoy_home / ".agent", decoy_home)
    assert not catalog.needs_trust(catalog.kinds["writer"])
    assert [f.level for f in catalog.findings()] == ["ok"]
    assert await agents_command(host, "allow explore")
    assert "explore needs no allowing: it is built in." in host.output
    assert await agents_command(host, "allow nobody")
    assert "No sub-agent named nobody" in host.output


@pytest.mark.parametrize(
    ("run", "command"), [(agents_command, "agents"), (skills_command, "skills")]
)
@pytest.mark.parametrize("arg", ["remove writer", "allow", "allow  "])
async def test_a_listing_command_with_other_words_shows_its_usage(
    run: Callable[[AllowHost, str], Awaitable[bool]],
    command: str,
    arg: str,
    workspace: Path,
    decoy_home: Path,
) -> None:
    host = Host(workspace, decoy_home)

    assert await run(host, arg)

    assert host.output.strip() == f"Usage: /{command}, or /{command} allow NAME"
    assert host.questions == []
