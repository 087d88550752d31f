"""The ``skill`` tool (Claude Code: ``Skill``): loads a skill's instructions on demand, and
then the files its folder holds.

Only names and descriptions are in the system prompt; ``skill {name}`` returns the body of
``SKILL.md`` and a list of the files beside it. ``skill {name, file}`` returns one of those
files, once that skill is loaded: the path is taken relative to the skill's folder, and a
file that leads out of it (``..``, an absolute path, a link anywhere on the way) is refused.
A user's skill lives outside the workspace, so read_file cannot reach it; this can, and
only inside the folders of skills the model loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import AliasChoices, BaseModel, Field

from tools.base import Tool, ToolContext, ToolError, ToolOutput
from tools.blocking import in_worker
from tools.skills.catalog import SKILL_FILE, Skill, SkillCatalog, read_regular

MAX_FILE_BYTES = 256 * 1024
MAX_LISTED = 50


class SkillInput(BaseModel):
    name: str = Field(
        description="The skill's name, as listed in the system prompt.",
        validation_alias=AliasChoices("name", "skill"),  # Claude Code's Skill takes "skill"
    )
    file: str | None = Field(
        default=None,
        description=(
            "A file of a loaded skill, relative to its folder (e.g. 'reference.md'). Leave "
            "out to load the skill's instructions."
        ),
    )


class SkillTool(Tool[SkillInput]):
    """Args:
    catalog: Gives the skills found (read again by the caller when it likes).
    on_load: Called with a skill the first time it is loaded in a turn: the caller applies
        its ``allowed-tools`` and returns a note for the model ("" for none).
    """

    name = "skill"
    description = (
        "Load a skill: instructions for a kind of task, listed by name and description in the "
        "system prompt. Load one when its description fits the task, before starting, and "
        "follow what it says. It returns the instructions and the files in the skill's "
        "folder; read one of those with {name, file}."
    )
    input_model = SkillInput
    idempotent = True
    kind = "read"

    def __init__(
        self, catalog: Callable[[], SkillCatalog], on_load: Callable[[Skill], str] | None = None
    ) -> None:
        self._catalog = catalog
        self._on_load = on_load or (lambda skill: "")
        self.loaded: dict[str, Skill] = {}

    def summary(self, args: SkillInput) -> str:
        return f"skill {args.name}" + (f" {args.file}" if args.file else "")

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolOutput:
        if args.file is None:
            skill = self._find(args.name)
            if ctx.read_denied(skill.path):
                raise ToolError(f"skill {skill.name!r} is withheld by a Read deny rule")
            self.loaded[skill.name] = skill
            note = self._on_load(skill)
            files = await in_worker(_listing, skill.folder)
            return ToolOutput(_loaded_text(skill, files, note))
        skill = self.loaded.get(args.name) or self._find(args.name)
        if skill.name not in self.loaded:
            raise ToolError(
                f"skill {skill.name!r} is not loaded yet",
                hint=f"load it first: skill with name {skill.name!r} and no file",
            )
        path = _inside(skill.folder, args.file)
        if ctx.read_denied(path):
            raise ToolError(f"{args.file} is withheld by a Read deny rule")
        try:
            text = await in_worker(read_regular, path, MAX_FILE_BYTES)
        except FileNotFoundError:
            raise ToolError(
                f"{args.file} is not in skill {skill.name!r}",
                hint="use a path from the file list the skill's loading returned",
            ) from None
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ToolError(
                f"{args.file} of skill {skill.name!r} cannot be read: {error}"
            ) from None
        return ToolOutput(text or f"{args.file} is empty.")

    def _find(self, name: str) -> Skill:
        skills = self._catalog().skills
        if name in skills:
            return skills[name]
        known = ", ".join(sorted(skills)) or "none"
        raise ToolError(f"no skill named {name!r}", hint=f"the skills are: {known}")


def _inside(folder: Path, raw: str) -> Path:
    """``folder/raw``, refused unless every step stays a real entry inside ``folder``."""
    relative = PurePosixPath(raw)
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise ToolError(
            f"{raw} is not a path inside the skill's folder",
            hint="give the path relative to the skill's folder, as the file list shows it",
        )
    path = folder
    for part in relative.parts:
        path = path / part
        if path.is_symlink():
            raise ToolError(f"{raw} is a symbolic link; a skill's files are read only directly")
    return path


def _listing(folder: Path) -> list[str]:
    """The files under ``folder`` (links not followed), relative to it, at most `MAX_LISTED`."""
    found: list[str] = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not Path(top, d).is_symlink())
        for name in sorted(files):
            entry = Path(top, name)
            if entry.is_symlink() or (top == str(folder) and name == SKILL_FILE):
                continue
            found.append(entry.relative_to(folder).as_posix())
            if len(found) > MAX_LISTED:
                return found
    return found


def _loaded_text(skill: Skill, files: list[str], note: str) -> str:
    lines = [f'<skill name="{skill.name}" folder="{skill.folder}">', skill.body, "</skill>"]
    if files:
        shown = files[:MAX_LISTED]
        more = " (and more)" if len(files) > MAX_LISTED else ""
        lines.append(
            f"Files in this skill's folder{more}, read with skill {{name: {skill.name!r}, "
            f"file: PATH}}: " + ", ".join(shown)
        )
    if note:
        lines.append(note)
    return "\n".join(lines)
