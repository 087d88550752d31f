"""Claude Code's ``permissions.defaultMode``: which file's wins, what waits for the project's
trust, what never applies from a project, and that what is written for this agent wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.setup.config import load_config
from agent.setup.trust import ProjectTrust


def _mode(path: Path, mode: Any, **more: Any) -> None:
    path.write_text(json.dumps({"permissions": {"defaultMode": mode, **more}}))


def _user(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def _project(workspace: Path, local: bool = False) -> Path:
    return workspace / ".claude" / ("settings.local.json" if local else "settings.json")


@pytest.mark.parametrize(
    ("mode", "approval", "plan_mode"),
    [
        ("default", "ask", False),
        ("acceptEdits", "auto-edit", False),
        ("plan", "ask", True),
        ("bypassPermissions", "full-auto", False),
    ],
)
def test_the_persons_own_mode_applies_as_our_setting(
    places: tuple[Path, Path], mode: str, approval: str, plan_mode: bool
) -> None:
    workspace, home = places
    _mode(_user(home), mode)

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})

    assert (config.approval, config.plan_mode) == (approval, plan_mode)
    assert config.permissions.mode_note is not None
    assert config.permissions.mode_note.startswith(f"defaultMode {mode} from ~/.claude/")


def test_the_nearest_file_wins(places: tuple[Path, Path]) -> None:
    workspace, home = places
    _mode(_user(home), "bypassPermissions")
    _mode(_project(workspace), "acceptEdits")
    _mode(_project(workspace, local=True), "plan")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=lambda *_: True)

    assert (config.approval, config.plan_mode) == ("ask", True)
    assert config.permissions.mode_note == (
        "defaultMode plan from .claude/settings.local.json: "
        "plan mode, read-only until you approve a plan"
    )


def test_a_projects_accept_edits_waits_for_trust(places: tuple[Path, Path]) -> None:
    workspace, home = places
    _mode(_project(workspace), "acceptEdits")
    trust = ProjectTrust(home / ".agent", workspace)
    environ = {"HOME": str(home)}

    config, _ = load_config(cwd=workspace, environ=environ, trust=trust)

    assert config.approval == "ask"
    assert config.permissions.mode_note is None
    assert config.permissions.waiting == [
        "defaultMode acceptEdits (.claude/settings.json) waits for `agent trust` here"
    ]
    assert trust.held is not None
    assert trust.held.lines() == [
        "defaultMode: acceptEdits, from .claude/settings.json (edit files without asking you)"
    ]

    trust.allow(trust.held)
    config, _ = load_config(
        cwd=workspace, environ=environ, trust=ProjectTrust(home / ".agent", workspace)
    )

    assert config.approval == "auto-edit"


def test_a_projects_plan_mode_only_tightens_and_applies_at_once(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_project(workspace), "plan")

    def refuse(path: Path, settings: dict[str, Any]) -> bool:
        raise AssertionError("plan mode loosens nothing: there is nothing to ask")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=refuse)

    assert config.plan_mode is True


@pytest.mark.parametrize("local", [False, True])
def test_a_project_can_never_turn_every_question_off(
    places: tuple[Path, Path], local: bool
) -> None:
    workspace, home = places
    _mode(_project(workspace, local), "bypassPermissions")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=lambda *_: True)

    assert config.approval == "ask"
    [warning] = config.permissions.warnings
    assert "'bypassPermissions' is not applied from a project's file" in warning
    assert "~/.claude/settings.json or pass --yes" in warning


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("auto", "'auto' is not applied: it needs Claude Code's safety classifier"),
        ("dontAsk", "'dontAsk' is not applied: use permission rules with --approval ask"),
        ("yolo", "permissions.defaultMode must be one of default, acceptEdits, plan, bypass"),
        (3, "permissions.defaultMode must be one of"),
    ],
)
def test_a_mode_we_lack_is_named_and_nothing_changes(
    places: tuple[Path, Path], mode: Any, said: str
) -> None:
    workspace, home = places
    _mode(_user(home), mode)

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})

    assert (config.approval, config.plan_mode) == ("ask", False)
    [warning] = config.permissions.warnings
    assert warning.startswith("~/.claude/settings.json: ")
    assert said in warning


def test_additional_directories_are_named_as_not_applied(places: tuple[Path, Path]) -> None:
    workspace, home = places
    _mode(_user(home), "default", additionalDirectories=["../shared"])

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})

    [warning] = config.permissions.warnings
    assert "additionalDirectories is not applied: agent works in one workspace" in warning


@pytest.mark.parametrize(
    ("ours", "environ", "overrides"),
    [
        ("approval: full-auto\n", {}, {}),
        ("plan_mode: false\n", {}, {}),
        ("", {}, {"approval": "ask"}),
        ("", {}, {"plan_mode": True}),
    ],
)
def test_what_is_written_for_this_agent_wins(
    places: tuple[Path, Path], ours: str, environ: dict[str, str], overrides: dict[str, Any]
) -> None:
    workspace, home = places
    _mode(_user(home), "acceptEdits")
    config_dir = home / ".config" / "agent"
    config_dir.mkdir(parents=True)
    (config_dir / "config.yaml").write_text(ours or "{}\n")

    config, _ = load_config(
        cwd=workspace, environ={"HOME": str(home), **environ}, overrides=overrides
    )

    assert config.approval != "auto-edit"
    assert config.permissions.mode_note is None


def test_a_projects_default_mode_waits_for_trust_over_the_persons_plan(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_user(home), "plan")
    _mode(_project(workspace), "default")
    environ = {"HOME": str(home)}
    trust = ProjectTrust(home / ".agent", workspace)

    config, _ = load_config(cwd=workspace, environ=environ, trust=trust)

    assert config.plan_mode is True
    assert config.permissions.mode_note == (
        "defaultMode plan from ~/.claude/settings.json: "
        "plan mode, read-only until you approve a plan"
    )
    assert trust.held is not None
    assert trust.held.lines() == [
        "defaultMode: default, from .claude/settings.json (turn plan mode off)"
    ]
    assert config.permissions.waiting == [
        "defaultMode default (.claude/settings.json) waits for `agent trust` here"
    ]

    trust.allow(trust.held)
    trusted, _ = load_config(
        cwd=workspace, environ=environ, trust=ProjectTrust(home / ".agent", workspace)
    )
    assert (trusted.approval, trusted.plan_mode) == ("ask", False)


@pytest.mark.parametrize(
    ("ours", "overrides"),
    [("plan_mode: true\n", {}), ("", {"plan_mode": True})],
)
def test_the_persons_own_plan_mode_is_not_left_for_a_projects_mode(
    places: tuple[Path, Path], ours: str, overrides: dict[str, Any]
) -> None:
    workspace, home = places
    _mode(_project(workspace, local=True), "acceptEdits")
    config_dir = home / ".config" / "agent"
    config_dir.mkdir(parents=True)
    (config_dir / "config.yaml").write_text(ours or "{}\n")
    trust = ProjectTrust(home / ".agent", workspace)

    config, _ = load_config(
        cwd=workspace, environ={"HOME": str(home)}, overrides=overrides, trust=trust
    )

    assert (config.approval, config.plan_mode) == ("ask", True)
    assert trust.held is None  # what is written for this agent wins: nothing to ask


def test_a_projects_stricter_mode_applies_over_the_persons_at_once(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_user(home), "bypassPermissions")
    _mode(_project(workspace), "acceptEdits")

    def refuse(path: Path, settings: dict[str, Any]) -> bool:
        raise AssertionError("acceptEdits is stricter than bypassPermissions: nothing to ask")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=refuse)

    assert (config.approval, config.plan_mode) == ("auto-edit", False)


def test_a_projects_agent_yaml_mode_cannot_drop_the_persons_claude_plan(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_user(home), "plan")
    (workspace / "agent.yaml").write_text("approval: ask\n")
    trust = ProjectTrust(home / ".agent", workspace)

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=trust)
    assert config.plan_mode is True
    assert trust.held is None

    (workspace / "agent.yaml").write_text("plan_mode: false\n")
    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=trust)
    assert config.plan_mode is True
    assert trust.held is not None
    assert trust.held.lines() == ["plan_mode: false (turn plan mode off)"]


def test_the_persons_claude_mode_is_not_named_where_a_stricter_project_value_replaced_it(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_user(home), "acceptEdits")
    (workspace / "agent.yaml").write_text("approval: ask\n")

    config, _ = load_config(
        cwd=workspace, environ={"HOME": str(home)}, trust=ProjectTrust(home / ".agent", workspace)
    )

    assert config.approval == "ask"
    assert config.permissions.mode_note is None


def test_permissions_lists_what_agent_yaml_holds_back_of_the_mode_and_rules(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _mode(_user(home), "plan")
    (workspace / "agent.yaml").write_text(
        "plan_mode: false\npermissions: {allow: ['Bash(curl:*)'], deny: ['Read(./.env)']}\n"
    )

    config, _ = load_config(
        cwd=workspace, environ={"HOME": str(home)}, trust=ProjectTrust(home / ".agent", workspace)
    )

    assert config.plan_mode is True
    assert config.permissions.deny == ["Read(./.env)"]
    assert config.permissions.waiting == [
        "plan_mode: false (agent.yaml) waits for `agent trust` here",
        "allow Bash(curl:*) (agent.yaml) waits for `agent trust` here",
    ]
