"""Skills in Claude Code's format: a folder holding ``SKILL.md``, found and read.

``SKILL.md`` opens with YAML frontmatter: ``name`` (lowercase letters, digits and hyphens, at
most 64), ``description`` (what it does and when to use it, at most 1024 characters) and,
optionally, ``allowed-tools`` (permission rules, a comma-separated string or a list). The
body after the frontmatter is the skill's instructions, loaded only when the model asks for
them (`tools.skills.tool.SkillTool`).

Where they are found is the caller's choice (`skill_dirs`); the first folder holding a name
wins it. A broken file is a `SkillProblem` (its path, and the line YAML names) and is
skipped: it never stops a session.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

Scope = Literal["project", "user"]
SKILL_FILE = "SKILL.md"
MAX_BYTES = 256 * 1024
NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
MAX_DESCRIPTION = 1024


@dataclass(frozen=True)
class Skill:
    """One skill, read."""

    name: str
    description: str
    body: str
    folder: Path
    """The folder holding ``SKILL.md``, resolved: what the skill's files are read under."""
    scope: Scope
    allowed_tools: tuple[str, ...] = ()
    """As written: each entry may hold several rules (``"Read, Grep"``)."""

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True)
class SkillProblem:
    """A skill file that could not be used, and why."""

    path: Path
    reason: str
    line: int | None = None

    def describe(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"skill skipped, {where}: {self.reason}"


@dataclass
class SkillCatalog:
    """The skills found, by name, and the files that were skipped."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[SkillProblem] = field(default_factory=list)
    shadowed: list[Skill] = field(default_factory=list)
    """Skills whose name an earlier folder already held (a project's beats the person's)."""


def skill_dirs(workspace: Path, home: Path, agent_home: Path) -> list[tuple[Path, Scope]]:
    """Where skills are looked for, the first winning a name found twice: the project's
    ``.claude/skills`` and ``.agent/skills``, then ``~/.claude/skills`` and
    ``AGENT_HOME/skills``."""
    return [
        (workspace / ".claude" / "skills", "project"),
        (workspace / ".agent" / "skills", "project"),
        (home / ".claude" / "skills", "user"),
        (agent_home / "skills", "user"),
    ]


def find_skills(directories: Sequence[tuple[Path, Scope]], workspace: Path) -> SkillCatalog:
    """Every ``NAME/SKILL.md`` under ``directories``. A project's skill folder must lie in
    ``workspace`` once links are followed; one that leads out is skipped as a problem."""
    catalog = SkillCatalog()
    root = workspace.resolve()
    for directory, scope in directories:
        try:
            entries = sorted(directory.iterdir()) if directory.is_dir() else []
        except OSError as error:
            catalog.problems.append(SkillProblem(directory, _why(error)))
            continue
        for entry in entries:
            if not (entry / SKILL_FILE).exists() and not (entry / SKILL_FILE).is_symlink():
                continue
            try:
                folder = entry.resolve()
            except (OSError, RuntimeError):  # a loop of links
                catalog.problems.append(SkillProblem(entry, "a loop of symbolic links"))
                continue
            if scope == "project" and folder != root and root not in folder.parents:
                catalog.problems.append(
                    SkillProblem(entry / SKILL_FILE, "its folder links outside the project")
                )
                continue
            found = read_skill(folder, scope)
            if isinstance(found, SkillProblem):
                catalog.problems.append(found)
            elif found.name in catalog.skills:
                catalog.shadowed.append(found)
            else:
                catalog.skills[found.name] = found
    return catalog


def read_skill(folder: Path, scope: Scope) -> Skill | SkillProblem:
    """The skill in ``folder/SKILL.md``, or what is wrong with that file."""
    path = folder / SKILL_FILE
    try:
        text = read_regular(path, MAX_BYTES)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return SkillProblem(path, _why(error))
    text = text.removeprefix("\ufeff")  # a byte order mark some editors write
    if not text.startswith("---"):
        return SkillProblem(path, "no frontmatter: start the file with a --- block", 1)
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return SkillProblem(path, "the frontmatter has no closing --- line", 1)
    try:
        meta = yaml.safe_load(head)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None  # the --- line is line 1
        problem = getattr(error, "problem", None) or "not valid YAML"
        return SkillProblem(path, f"frontmatter is not valid YAML: {problem}", line)
    if not isinstance(meta, dict):
        return SkillProblem(path, "the frontmatter must be key: value lines", 2)
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return SkillProblem(path, "name must be lowercase letters, digits and hyphens (at most 64)")
    if not isinstance(description, str) or not description.strip():
        return SkillProblem(path, "description is missing: say what it does and when to use it")
    tools = meta.get("allowed-tools")
    if tools is None:
        allowed: tuple[str, ...] = ()
    elif isinstance(tools, str):
        allowed = (tools,)
    elif isinstance(tools, list) and all(isinstance(item, str) for item in tools):
        allowed = tuple(tools)
    else:
        return SkillProblem(path, "allowed-tools must be a string or a list of strings")
    return Skill(
        name=name,
        description=" ".join(description.split())[:MAX_DESCRIPTION],
        body=body.partition("\n")[2].strip(),
        folder=folder,
        scope=scope,
        allowed_tools=allowed,
    )


def read_regular(path: Path, limit: int) -> str:
    """The UTF-8 text of ``path``, a regular file no larger than ``limit`` bytes, opened
    without following a link at its last step (a FIFO or device is refused, not waited on).

    Raises:
        OSError, UnicodeDecodeError, ValueError: what is wrong with it.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > limit:
            raise ValueError(f"larger than {limit // 1024} KB")
        return handle.read(limit + 1).decode("utf-8")


def _why(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(error, OSError):
        if error.errno == getattr(os, "ELOOP", -1):
            return "a symbolic link (write SKILL.md as a file)"
        return error.strerror or str(error)
    return str(error)
