"""Sub-agent definition files: what is taken from them, and how a bad one is reported."""

from __future__ import annotations

from pathlib import Path

from agent.subagents import BUILTIN_TYPES, agent_dirs, load_definitions

TOOLS = ["read_file", "write_file", "edit_file", "list_files", "search", "run_command"]


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text)
    return path


def test_the_project_wins_a_name_and_claude_names_become_ours(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    dirs = agent_dirs(workspace, home / ".agent", home)
    write(
        dirs[1], "a", "---\nname: fixer\ndescription: project one\ntools: Edit, Bash, Task\n---\n"
    )
    write(dirs[3], "b", "---\nname: fixer\ndescription: person's one\n---\n")

    found = load_definitions(dirs, TOOLS)

    assert found.problems == []
    fixer = found.kinds["fixer"]
    assert fixer.description == "project one"
    assert fixer.tools == frozenset({"edit_file", "run_command"})  # task is never given
    assert set(BUILTIN_TYPES) <= set(found.kinds)


def test_disallowed_tools_and_plan_mode_only_narrow(tmp_path: Path) -> None:
    write(
        tmp_path,
        "n",
        "---\nname: narrow\ndescription: d\ndisallowedTools: [Bash, Write]\n"
        "permissionMode: plan\nmaxTurns: 2\n---\nBody.\n",
    )
    write(
        tmp_path, "w", "---\nname: wide\ndescription: d\npermissionMode: bypassPermissions\n---\n"
    )

    kinds = load_definitions([tmp_path], TOOLS).kinds

    assert kinds["narrow"].tools == frozenset(TOOLS) - {"run_command", "write_file"}
    assert kinds["narrow"].read_only
    assert kinds["narrow"].max_turns == 2
    assert kinds["narrow"].prompt.endswith("Body.")
    assert not kinds["wide"].read_only  # and nothing widens: the parent's rules still apply
    assert kinds["wide"].tools is None


def test_a_broken_file_is_reported_with_its_path_and_skipped(tmp_path: Path) -> None:
    bad = {
        "nofront": "just text\n",
        "noname": "---\ndescription: d\n---\n",
        "tool": "---\nname: t\ndescription: d\ntools: Teleport\n---\n",
        "yaml": "---\nname: y\ndescription: d\nfoo: [\n---\n",
        "turns": "---\nname: m\ndescription: d\nmaxTurns: -1\n---\n",
    }
    for name, text in bad.items():
        write(tmp_path, name, text)

    found = load_definitions([tmp_path], TOOLS)

    assert set(found.kinds) == set(BUILTIN_TYPES)
    assert len(found.problems) == len(bad)
    assert any("unknown tool 'Teleport'" in p for p in found.problems)
    assert any(p.startswith(f"{tmp_path / 'nofront.md'}:1: no frontmatter") for p in found.problems)
    assert all(str(tmp_path) in p for p in found.problems)
