"""A session's skills: the system prompt's lines, and allowed-tools held from a skill's
loading to the turn's end (a project's only once the person allowed that file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent.engine.outcome import TurnEnded
from agent.permissions import PermissionCheck, PermissionSettings
from agent.permissions.rules import Call, Verdict
from agent.setup.skill_link import SkillLink
from agent.terminal.skills_view import skill_choices
from providers import Event
from sessions import TurnStatus


def write_skill(folder: Path, name: str, extra: str = "", body: str = "SECRET-BODY") -> None:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: Use for {name}.\n{extra}---\n{body}\n")


def link(workspace: Path, home: Path, check: PermissionCheck | None) -> SkillLink:
    events: list[Event] = []
    return SkillLink(workspace, home, home / ".agent", check, events.append)


def echo_allowed(check: PermissionCheck) -> bool:
    found = check.rules.verdict(Call("run_command", "command", command="echo hi"))
    return found is not None and found[0] is Verdict.ALLOW


def test_the_prompt_names_each_skill_and_holds_no_body(workspace: Path, decoy_home: Path) -> None:
    write_skill(workspace / ".claude/skills", "alpha")
    write_skill(decoy_home / ".claude/skills", "beta")

    section = link(workspace, decoy_home, None).prompt_section()

    assert "- alpha: Use for alpha." in section
    assert "- beta: Use for beta." in section
    assert "SECRET-BODY" not in section
    assert link(workspace / "nothing", decoy_home / "none", None).prompt_section() == ""
    tiny = ["read_file", "list_files", "search"]  # a tiny model is offered no skill tool
    assert link(workspace, decoy_home, None).prompt_section(tiny) == ""


def test_allowed_tools_hold_from_loading_until_the_turn_ends(
    workspace: Path, decoy_home: Path
) -> None:
    write_skill(decoy_home / ".claude/skills", "mine", "allowed-tools: Bash(echo hi)\n")
    check = PermissionCheck(PermissionSettings(), None, workspace=workspace, home=decoy_home)
    skills = link(workspace, decoy_home, check)
    assert not echo_allowed(check)

    note = skills.on_load(skills.catalog.skills["mine"])

    assert "Bash(echo hi)" in note
    assert echo_allowed(check)
    skills.on_event(TurnEnded(status=TurnStatus.DONE, steps=2))
    assert not echo_allowed(check)


def test_a_projects_allowed_tools_wait_until_the_person_allows_that_file(
    workspace: Path, decoy_home: Path
) -> None:
    folder = workspace / ".agent/skills"
    write_skill(folder, "theirs", "allowed-tools: Bash(echo hi)\n")
    check = PermissionCheck(PermissionSettings(), None, workspace=workspace, home=decoy_home)
    skills = link(workspace, decoy_home, check)
    skill = skills.catalog.skills["theirs"]

    [waiting] = skills.notices()
    assert "theirs" in waiting.text
    assert "/skills allow" in waiting.text
    assert "not in force" in skills.on_load(skill)
    assert not echo_allowed(check)
    skills.trust(skill)
    assert "hold until this turn ends" in skills.on_load(skill)
    assert echo_allowed(check)
    skills.on_event(TurnEnded(status=TurnStatus.DONE, steps=1))

    assert link(workspace, decoy_home, check).notices() == []
    write_skill(folder, "theirs", "allowed-tools: Bash(echo hi)\n", body="Changed.")
    changed = link(workspace, decoy_home, check)
    assert changed.needs_trust(changed.catalog.skills["theirs"])


@dataclass
class Host:
    workspace: Path
    environ: dict[str, str]
    shown: list[str] = field(default_factory=list)

    def show(self, renderable: object) -> None:
        self.shown.append(str(renderable))

    async def ask(self, question: str) -> str:
        return "y"


def test_completion_after_skills_offers_allow_for_each_project_skill_waiting(
    workspace: Path, decoy_home: Path
) -> None:
    write_skill(workspace / ".claude/skills", "waits", "allowed-tools: Read\n")
    write_skill(workspace / ".claude/skills", "plain")
    write_skill(decoy_home / ".claude/skills", "mine", "allowed-tools: Read\n")
    host = Host(workspace, {"HOME": str(decoy_home), "AGENT_HOME": str(decoy_home / ".agent")})

    assert [value for value, _ in skill_choices(host)] == ["allow waits"]
