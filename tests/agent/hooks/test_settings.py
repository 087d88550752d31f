"""The ``hooks:`` configuration: shape errors, files adding up, project hooks held back."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.hooks import HookMatcher
from agent.setup.config import Config, ConfigError, load_config, person_view
from agent.setup.trust import ProjectTrust, held_back

USER_HOOKS = """\
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: user-check}]
"""

PROJECT_HOOKS = """\
hooks:
  PreToolUse:
    - matcher: Write|Edit
      hooks: [{type: command, command: project-check, timeout: 5}]
  Stop:
    - hooks: [{type: command, command: project-stop}]
max_steps: 9
"""


def load(
    tmp_path: Path, *, user: str = "", project: str = "", trust: ProjectTrust | None = None
) -> Config:
    home, workspace = tmp_path / "home", tmp_path / "repo"
    workspace.mkdir(exist_ok=True)
    if user:
        (home / ".config" / "agent").mkdir(parents=True, exist_ok=True)
        (home / ".config" / "agent" / "config.yaml").write_text(user)
    if project:
        (workspace / "agent.yaml").write_text(project)
    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=trust)
    return config


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("hooks: {PreToolUze: []}", "unknown hook event 'PreToolUze'"),
        ("hooks: {PreToolUse: [{matcher: Bash}]}", "hooks.PreToolUse.0.hooks"),
        ("hooks: {Stop: [{hooks: [{type: http, command: x}]}]}", "hooks.Stop.0.hooks.0.type"),
        ("hooks: {Stop: [{hooks: [{command: x, when: now}]}]}", "hooks.Stop.0.hooks.0.when"),
        ("hooks: {Stop: [{hooks: [{command: x, timeout: 0}]}]}", "hooks.Stop.0.hooks.0.timeout"),
        ("hooks: {PreToolUse: [{matcher: '(', hooks: []}]}", "not a valid regular expression"),
        ("hooks: [PreToolUse]", "hooks"),
    ],
)
def test_a_bad_shape_is_a_config_error_naming_the_key(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=r"agent\.yaml") as caught:
        load(tmp_path, project=text)
    assert said in str(caught.value)


def test_user_and_project_hooks_add_up(tmp_path: Path) -> None:
    config = load(tmp_path, user=USER_HOOKS, project=PROJECT_HOOKS)
    commands = [h.command for entry in config.hooks["PreToolUse"] for h in entry.hooks]
    assert commands == ["user-check", "project-check"]
    assert config.hooks["Stop"][0].hooks[0].timeout == 60


def test_project_hooks_wait_until_the_project_is_trusted(tmp_path: Path) -> None:
    assert held_back({"hooks": {"Stop": []}, "max_steps": 3}, person_view()) == {
        "hooks": {"Stop": []}
    }
    workspace, home = tmp_path / "repo", tmp_path / "home"
    trust = ProjectTrust(home, workspace)
    config = load(tmp_path, user=USER_HOOKS, project=PROJECT_HOOKS, trust=trust)
    assert [h.command for entry in config.hooks["PreToolUse"] for h in entry.hooks] == [
        "user-check"
    ]
    assert "Stop" not in config.hooks
    assert config.max_steps == 9  # the rest of the file applies at once
    assert trust.held is not None
    assert "hooks for PreToolUse, Stop (run commands as you" in "\n".join(trust.held.lines())

    trust.allow(trust.held)
    later = ProjectTrust(home, workspace)
    allowed = load(tmp_path, user=USER_HOOKS, project=PROJECT_HOOKS, trust=later)
    assert [h.command for entry in allowed.hooks["PreToolUse"] for h in entry.hooks] == [
        "user-check",
        "project-check",
    ]


def test_matcher_forms() -> None:
    def matches(matcher: str, name: str) -> bool:
        return HookMatcher(matcher=matcher, hooks=[]).matches(name)

    assert matches("Bash", "run_command")
    assert matches("run_command", "run_command")
    assert matches("Edit|Write", "write_file")
    assert not matches("Edit|Write", "read_file")
    assert matches("mcp__github__.*", "mcp__github__create_issue")
    assert not matches("mcp__github__.*", "mcp__jira__create_issue")
    assert matches("mcp__github__create_issue", "mcp__github__create_issue")
    assert not matches("Bas", "run_command")  # names match whole, not as prefixes
    assert matches("*", "anything")
    assert matches("", "anything")
