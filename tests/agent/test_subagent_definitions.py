"""Sub-agent definition files: what is taken from them, and how a bad one is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.setup.child_models import resolve_model
from agent.subagents import BUILTIN_TYPES, agent_dirs, load_definitions
from providers.models import ModelRef

TOOLS = ["read_file", "write_file", "edit_file", "list_files", "search", "run_command"]


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.md"
    path.write_text(text)
    return path


def test_the_project_wins_a_name_and_claude_names_become_ours(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    dirs = agent_dirs(workspace, home / ".agent", home)
    fixer = "---\nname: fixer\ndescription: project one\ntools: Edit, Bash, Task\n---\n"
    write(dirs[1][0], "a", fixer)
    write(dirs[3][0], "b", "---\nname: fixer\ndescription: person's one\n---\n")

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

    kinds = load_definitions([(tmp_path, "project")], TOOLS).kinds

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

    found = load_definitions([(tmp_path, "project")], TOOLS)

    assert set(found.kinds) == set(BUILTIN_TYPES)
    assert len(found.problems) == len(bad)
    assert any("unknown tool 'Teleport'" in p for p in found.problems)
    assert any(p.startswith(f"{tmp_path / 'nofront.md'}:1: no frontmatter") for p in found.problems)
    assert all(str(tmp_path) in p for p in found.problems)


def test_a_broken_key_is_reported_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "t", "---\nname: t\ndescription: d\n\ntools: Read, Teleport\n---\n")
    write(tmp_path, "m", "---\nname: m\ndescription: d\npermissionMode: yolo\n---\n")

    found = load_definitions([(tmp_path, "user")], TOOLS)

    assert f"{path}:5: unknown tool 'Teleport' in 'tools'; skipped" in found.problems
    assert any(
        p.startswith(f"{tmp_path / 'm.md'}:4: unknown permissionMode") for p in found.problems
    )


def test_model_mode_scope_and_what_a_name_hides(tmp_path: Path) -> None:
    project, user = tmp_path / "p", tmp_path / "u"
    write(
        project,
        "a",
        "---\nname: a\ndescription: d\nmodel: haiku\npermissionMode: acceptEdits\n---\n",
    )
    write(user, "a", "---\nname: a\ndescription: mine\nmodel: inherit\n---\n")
    write(user, "b", "---\nname: b\ndescription: d\nmodel: inherit\n---\n")

    found = load_definitions([(project, "project"), (user, "user")], TOOLS)

    a, b = found.kinds["a"], found.kinds["b"]
    assert (a.model, a.permission_mode, a.scope, a.source) == (
        "haiku",
        "acceptEdits",
        "project",
        project / "a.md",
    )
    assert a.loosens
    assert a.digest
    assert (b.model, b.scope) == (None, "user")  # inherit is the parent's model
    assert [(k.name, k.description) for k in found.shadowed] == [("a", "mine")]


def test_a_model_name_or_alias_resolves_to_a_reference() -> None:
    chain = [ModelRef.parse("openai:gpt-4.1"), ModelRef.parse("anthropic:claude-haiku-4-5-x")]

    assert resolve_model("haiku", chain) == ModelRef.parse("anthropic:claude-haiku-4-5-x")
    assert resolve_model("opus", chain) == ModelRef.parse("anthropic:claude-opus-4-1")
    assert resolve_model("gpt-4.1-mini", chain) == ModelRef.parse("openai:gpt-4.1-mini")
    assert resolve_model("local:tiny", chain) == ModelRef.parse("local:tiny")
    with pytest.raises(ValueError, match="provider:model"):
        resolve_model("two words", chain)
