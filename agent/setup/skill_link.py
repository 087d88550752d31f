"""The skills of a session: found once at start (``/skills`` reads them again), named in
the system prompt, loaded by the model through the ``skill`` tool, and their
``allowed-tools`` in force from a skill's loading until the end of that turn.

A project's skill is the repository's content: its ``allowed-tools`` hold only once the
person allowed that exact file (``/skills allow NAME`` in the REPL; remembered per
workspace, 0600, under AGENT_HOME; a changed file needs allowing again). Until then the
skill still loads, and its tools ask as any other call does.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from agent.engine.outcome import TurnEnded
from agent.permissions import PermissionCheck, RuleError, parse_rule, split_rules
from agent.permissions.listing import unknown_tool_warning
from providers import Event, EventSink, Notice
from tools.mcp import ProjectApprovals
from tools.skills import Skill, SkillCatalog, SkillTool, find_skills, skill_dirs

APPROVALS_FILE = "project-skills.json"
MAX_PROMPT_CHARS = 12_000
"""The skills' lines in the system prompt stop here; the rest are named by /skills only."""


class SkillLink:
    """Args:
    workspace: The project.
    home: The person's home (``~/.claude/skills``).
    agent_home: ``AGENT_HOME`` (its ``skills/``, and where trust is remembered).
    permissions: Where ``allowed-tools`` go; None runs without them.
    events: Where notes for the person go.
    """

    def __init__(
        self,
        workspace: Path,
        home: Path,
        agent_home: Path,
        permissions: PermissionCheck | None,
        events: EventSink,
    ) -> None:
        self._dirs = skill_dirs(workspace, home, agent_home)
        self._workspace = workspace
        self._permissions = permissions
        self._events = events
        self._approvals = ProjectApprovals(agent_home, workspace, file_name=APPROVALS_FILE)
        self._held = ExitStack()
        self._applied: set[str] = set()
        self.catalog = SkillCatalog()
        self.refresh()
        self.tool = SkillTool(lambda: self.catalog, self.on_load)

    def refresh(self) -> SkillCatalog:
        """Read the skill folders again (for ``/skills``; the system prompt keeps the list
        the session started with)."""
        self.catalog = find_skills(self._dirs, self._workspace)
        return self.catalog

    def tools(self) -> list[SkillTool]:
        """The ``skill`` tool, offered while there is a skill to load."""
        return [self.tool] if self.catalog.skills else []

    def notices(self) -> list[Notice]:
        """One warning per skipped skill file, and a note naming the project's skills whose
        allowed-tools wait for the person, for the start of a session."""
        notices = [Notice(text=problem.describe()) for problem in self.catalog.problems]
        waiting = [skill.name for skill in self.catalog.skills.values() if self.needs_trust(skill)]
        if waiting and self._permissions is not None:
            notices.append(
                Notice(
                    text=f"This project's skills {', '.join(waiting)} allow tools, which ask as "
                    "usual until you allow them: /skills allow NAME in the REPL.",
                    level="info",
                )
            )
        return notices

    def prompt_section(self, enabled: Sequence[str] | None = None) -> str:
        """The skills' names and descriptions for the system prompt; "" when there are none,
        or when ``enabled`` (``tools.enabled``: a tiny model's few tools) leaves out the
        ``skill`` tool."""
        offered = enabled is None or any(fnmatch.fnmatchcase("skill", p) for p in enabled)
        if not self.catalog.skills or not offered:
            return ""
        lines = [
            "\nSkills (instructions for kinds of task, loaded on demand): when a task fits a "
            "skill's description, call the skill tool with its name first and follow what it "
            "returns."
        ]
        size = len(lines[0])
        for skill in self.catalog.skills.values():
            line = f"- {skill.name}: {skill.description}"
            if size + len(line) > MAX_PROMPT_CHARS:
                lines.append("- (more skills: the person can list them with /skills)")
                break
            lines.append(line)
            size += len(line)
        return "\n".join(lines) + "\n"

    def needs_trust(self, skill: Skill) -> bool:
        """A project's skill that allows tools, not (yet) allowed as it is now."""
        return (
            skill.scope == "project"
            and bool(skill.allowed_tools)
            and not self._approvals.allowed_digest(skill.name, digest(skill))
        )

    def trust(self, skill: Skill) -> None:
        """Remember that the person allowed ``skill`` as it is. Raises `OSError`."""
        self._approvals.allow_digest(skill.name, digest(skill))

    def rules(self, skill: Skill) -> list[str]:
        """``skill``'s ``allowed-tools``, one permission rule each."""
        return split_rules(list(skill.allowed_tools))

    def on_event(self, event: Event) -> None:
        """A turn's end ends the ``allowed-tools`` of the skills it loaded."""
        if isinstance(event, TurnEnded):
            self._held.close()
            self._applied.clear()

    def on_load(self, skill: Skill) -> str:
        """Put ``skill``'s allowed-tools in force for the rest of the turn (if they may hold);
        the note for the model says what holds."""
        if not skill.allowed_tools or self._permissions is None:
            return ""
        if self.needs_trust(skill):
            return (
                "Its allowed-tools are not in force: the person has not allowed this project's "
                "skill (/skills allow NAME), so its tools ask for approval as usual."
            )
        if skill.name in self._applied:
            return ""
        rules: list[str] = []
        for text in self.rules(skill):
            where = f"skill {skill.name} allowed-tools"
            try:
                parse_rule(text)
            except RuleError as error:
                self._events(Notice(text=f"{where}: {text} is left out: {error}"))
                continue
            if warning := unknown_tool_warning("allow", text, where):
                self._events(Notice(text=warning))
            rules.append(text)
        if not rules:
            return ""
        self._held.enter_context(self._permissions.allowing(rules))
        self._applied.add(skill.name)
        return "Its allowed-tools hold until this turn ends: " + ", ".join(rules) + "."


def digest(skill: Skill) -> str:
    """What the person's trust is given to: this exact skill file."""
    text = f"{skill.path}\0{skill.description}\0{skill.body}\0{skill.allowed_tools}"
    return hashlib.sha256(text.encode()).hexdigest()
