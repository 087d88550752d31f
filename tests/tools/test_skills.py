"""Skills: finding SKILL.md files, which one wins a name, broken files, and the skill tool
loading a skill and the files beside it (and nothing outside its folder)."""

from __future__ import annotations

from pathlib import Path

from providers.messages import ToolResultBlock, ToolUseBlock
from tests.tools.conftest import Harness, MakeHarness
from tools.skills import Skill, SkillCatalog, SkillTool, find_skills, skill_dirs


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill_text(name: str, description: str, body: str = "Do it well.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


async def use(harness: Harness, **arguments: str) -> ToolResultBlock:
    """One ``skill`` call (its argument is called ``name``, as `Harness.run`'s first is)."""
    return await harness.executor.execute(ToolUseBlock(id="toolu_s", name="skill", input=arguments))


def catalog(workspace: Path, home: Path) -> SkillCatalog:
    return find_skills(skill_dirs(workspace, home, home / ".agent"), workspace)


def test_skills_are_found_in_all_four_places_and_the_project_wins_a_name(
    workspace: Path, decoy_home: Path
) -> None:
    write_skill(workspace / ".claude/skills", "pdf", skill_text("pdf", "Project PDFs."))
    write_skill(workspace / ".agent/skills", "release", skill_text("release", "Cut a release."))
    write_skill(decoy_home / ".claude/skills", "pdf", skill_text("pdf", "My PDFs."))
    write_skill(decoy_home / ".claude/skills", "notes", skill_text("notes", "Meeting notes."))
    write_skill(decoy_home / ".agent/skills", "deploy", skill_text("deploy", "Deploy it."))

    found = catalog(workspace, decoy_home)

    assert sorted(found.skills) == ["deploy", "notes", "pdf", "release"]
    assert found.skills["pdf"].description == "Project PDFs."
    assert found.skills["pdf"].scope == "project"
    assert found.skills["deploy"].scope == "user"
    assert [skill.description for skill in found.shadowed] == ["My PDFs."]
    assert found.problems == []


def test_a_broken_skill_file_is_reported_with_its_path_and_line_and_skipped(
    workspace: Path, decoy_home: Path
) -> None:
    skills = workspace / ".claude/skills"
    bad_yaml = write_skill(skills, "bad", "---\nname: bad\ndescription: [unclosed\n---\nbody\n")
    no_name = write_skill(skills, "anon", "---\ndescription: No name here.\n---\nbody\n")
    no_description = write_skill(skills, "bare", "---\nname: bare\n---\nbody\n")
    no_front = write_skill(skills, "plain", "Just text.\n")
    write_skill(skills, "good", skill_text("good", "Works."))
    write_skill(skills, "windows", "\ufeff" + skill_text("windows", "CRLF.").replace("\n", "\r\n"))

    found = catalog(workspace, decoy_home)

    assert list(found.skills) == ["good", "windows"]
    assert found.skills["windows"].body == "Do it well."
    problems = {problem.path: problem for problem in found.problems}
    assert set(problems) == {bad_yaml, no_name, no_description, no_front}
    assert problems[bad_yaml].line is not None
    assert f"{bad_yaml}:{problems[bad_yaml].line}" in problems[bad_yaml].describe()
    assert "not valid YAML" in problems[bad_yaml].reason
    assert "name must be" in problems[no_name].reason
    assert "description is missing" in problems[no_description].reason
    assert "no frontmatter" in problems[no_front].reason


def test_a_project_skill_folder_linking_out_of_the_project_is_skipped(
    workspace: Path, decoy_home: Path
) -> None:
    outside = decoy_home / "elsewhere"
    write_skill(decoy_home, "elsewhere", skill_text("sneak", "From outside."))
    (workspace / ".claude/skills").mkdir(parents=True)
    (workspace / ".claude/skills/sneak").symlink_to(outside)

    found = catalog(workspace, decoy_home)

    assert found.skills == {}
    assert "links outside the project" in found.problems[0].reason


async def test_the_skill_tool_loads_the_body_then_a_file_beside_it(
    workspace: Path, decoy_home: Path, make_harness: MakeHarness
) -> None:
    folder = decoy_home / ".claude/skills/pdf"
    write_skill(folder.parent, "pdf", skill_text("pdf", "PDF work.", body="Read FORMS.md first."))
    (folder / "FORMS.md").write_text("Fill forms field by field.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "fill.py").write_text("print('fill')\n")
    (decoy_home / "secret.txt").write_text("top secret\n")
    (folder / "link.md").symlink_to(decoy_home / "secret.txt")
    tool = SkillTool(lambda: catalog(workspace, decoy_home))
    harness = make_harness(more_tools=lambda: [tool])

    early = await use(harness, name="pdf", file="FORMS.md")
    loaded = await use(harness, skill="pdf")  # Claude Code's name for the argument
    forms = await use(harness, name="pdf", file="FORMS.md")
    script = await use(harness, name="pdf", file="scripts/fill.py")
    up = await use(harness, name="pdf", file="../../../secret.txt")
    absolute = await use(harness, name="pdf", file=str(decoy_home / "secret.txt"))
    linked = await use(harness, name="pdf", file="link.md")
    unknown = await use(harness, name="nope")

    assert early.is_error
    assert "not loaded yet" in early.content
    assert not loaded.is_error
    assert "Read FORMS.md first." in loaded.content
    assert "FORMS.md" in loaded.content
    assert "scripts/fill.py" in loaded.content
    assert "link.md" not in loaded.content
    assert "Fill forms field by field." in forms.content
    assert "print('fill')" in script.content
    for refused in (up, absolute, linked):
        assert refused.is_error
        assert "top secret" not in refused.content
    assert unknown.is_error
    assert "the skills are: pdf" in unknown.content


async def test_a_loaded_skill_calls_back_once_with_its_allowed_tools(
    workspace: Path, decoy_home: Path, make_harness: MakeHarness
) -> None:
    write_skill(
        workspace / ".agent/skills",
        "lint",
        skill_text("lint", "Lint.", extra="allowed-tools: Read, Bash(ruff check:*)\n"),
    )
    seen: list[tuple[str, ...]] = []

    def on_load(skill: Skill) -> str:
        seen.append(skill.allowed_tools)
        return "NOTE FROM CALLER"

    tool = SkillTool(lambda: catalog(workspace, decoy_home), on_load)
    harness = make_harness(more_tools=lambda: [tool])
    result = await use(harness, name="lint")

    assert seen == [("Read, Bash(ruff check:*)",)]
    assert "NOTE FROM CALLER" in result.content


async def test_a_read_deny_rule_withholds_a_skill_and_its_files(
    workspace: Path, decoy_home: Path, make_harness: MakeHarness
) -> None:
    skills = decoy_home / ".claude/skills"
    write_skill(skills, "private", skill_text("private", "Kept back."))
    write_skill(skills, "open", skill_text("open", "Readable."))
    (skills / "open" / "keys.txt").write_text("hidden\n")
    tool = SkillTool(lambda: catalog(workspace, decoy_home))
    denied = {skills / "private" / "SKILL.md", skills / "open" / "keys.txt"}
    harness = make_harness(more_tools=lambda: [tool], read_denied=lambda path: path in denied)

    private = await use(harness, name="private")
    opened = await use(harness, name="open")
    keys = await use(harness, name="open", file="keys.txt")

    assert private.is_error
    assert "Read deny rule" in private.content
    assert not opened.is_error
    assert keys.is_error
    assert "hidden" not in keys.content
