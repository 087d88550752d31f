"""Claude Code's permission rules from its settings files: where they are read, how they add
up with ours, what waits for the project's trust, and what a broken file does."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType

from agent.permissions import PermissionCheck
from agent.permissions.claude_files import read_claude_rules
from agent.permissions.rules import Call, Verdict
from agent.setup.config import load_config
from agent.setup.trust import HeldSettings, ProjectTrust
from agent.terminal.permissions_view import permissions_table


def rendered(renderable: RenderableType, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False).print(renderable)
    return out.getvalue()


def _write(path: Path, data: Any) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def _permissions(**rules: list[str]) -> dict[str, Any]:
    return {"permissions": rules, "model": "claude-opus-4", "env": {"X": "1"}}


def _verdict(check: PermissionCheck, command: str) -> Verdict | None:
    call = Call("run_command", "execute", command=command)
    found = check.rules.verdict(call)
    return None if found is None else found[0]


def _check(config_permissions: Any, workspace: Path, home: Path) -> PermissionCheck:
    return PermissionCheck(config_permissions, None, workspace=workspace, home=home)


def test_the_three_files_are_read_and_their_rules_add_up_with_ours(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _write(home / ".claude" / "settings.json", _permissions(allow=["Bash(npm run test:*)"]))
    _write(workspace / ".claude" / "settings.json", _permissions(deny=["Read(./.env)"]))
    _write(workspace / ".claude" / "settings.local.json", _permissions(ask=["Bash(git push:*)"]))
    (workspace / "agent.yaml").write_text("permissions:\n  deny: ['Bash(rm -rf:*)']\n")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})
    check = _check(config.permissions, workspace, home)

    assert _verdict(check, "npm run test -- -k fast") is Verdict.ALLOW
    assert _verdict(check, "npm run test") is Verdict.ALLOW  # the legacy ":*" prefix form
    assert _verdict(check, "npm run build") is None
    assert _verdict(check, "git push origin main") is Verdict.ASK
    assert _verdict(check, "rm -rf build") is Verdict.DENY
    env = Call("read_file", "read", paths=(workspace.resolve() / ".env",), workspace=workspace)
    assert check.rules.verdict(env) is not None
    assert [(r.kind, r.text, r.origin) for r in check.listing()] == [
        ("deny", "Bash(rm -rf:*)", "agent.yaml"),
        ("deny", "Read(./.env)", ".claude/settings.json"),
        ("ask", "Bash(git push:*)", ".claude/settings.local.json"),
        ("allow", "Bash(npm run test:*)", "~/.claude/settings.json"),
    ]
    assert config.permissions.warnings == []


def test_a_projects_allow_rules_wait_for_trust_and_its_deny_rules_hold_at_once(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _write(
        workspace / ".claude" / "settings.json",
        _permissions(allow=["Bash(curl:*)"], deny=["Bash(git push:*)"]),
    )
    _write(workspace / ".claude" / "settings.local.json", _permissions(allow=["Edit"]))
    trust = ProjectTrust(home / ".agent", workspace)
    environ = {"HOME": str(home)}

    config, _ = load_config(cwd=workspace, environ=environ, trust=trust)
    check = _check(config.permissions, workspace, home)

    assert _verdict(check, "curl https://example.com") is None
    assert _verdict(check, "git push") is Verdict.DENY
    assert [rule.text for rule in check.rules.allow] == []
    assert check.waiting == [  # what /permissions lists as not in force
        "allow Bash(curl:*) (.claude/settings.json) waits for `agent trust` here",
        "allow Edit (.claude/settings.local.json) waits for `agent trust` here",
    ]
    held = trust.held
    assert held is not None
    assert held.path == workspace / ".claude" / "settings.json"
    assert held.lines() == [
        "permission allow: Bash(curl:*), from .claude/settings.json (run it without asking you)",
        "permission allow: Edit, from .claude/settings.local.json (run it without asking you)",
    ]

    trust.allow(held)
    config, _ = load_config(
        cwd=workspace, environ=environ, trust=ProjectTrust(home / ".agent", workspace)
    )

    trusted = _check(config.permissions, workspace, home)
    assert _verdict(trusted, "curl x") is Verdict.ALLOW
    assert trusted.waiting == []


def test_the_question_about_agent_yaml_covers_the_claude_files_too(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    (workspace / "agent.yaml").write_text("approval: full-auto\n")
    _write(workspace / ".claude" / "settings.json", _permissions(allow=["Bash(make:*)"]))
    asked: list[HeldSettings] = []

    def say_no(path: Path, settings: dict[str, Any]) -> bool:
        asked.append(HeldSettings(path, settings))
        return False

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=say_no)

    assert len(asked) == 1
    assert asked[0].path == workspace / "agent.yaml"
    assert asked[0].lines()[-1].startswith("permission allow: Bash(make:*), from .claude/")
    assert (config.approval, config.permissions.allow) == ("ask", [])


def test_the_persons_own_file_needs_no_trust(places: tuple[Path, Path]) -> None:
    workspace, home = places
    _write(home / ".claude" / "settings.json", _permissions(allow=["Bash(make:*)"]))

    def refuse(path: Path, settings: dict[str, Any]) -> bool:
        raise AssertionError("nothing of the project's was held")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=refuse)

    assert config.permissions.allow == ["Bash(make:*)"]


@pytest.mark.parametrize(
    ("content", "warning"),
    [
        ("{not json", ".claude/settings.json: not valid JSON (line 1); its permission rules"),
        ("[1, 2]", ".claude/settings.json: must be a JSON object"),
        ({"permissions": ["Bash"]}, ".claude/settings.json: 'permissions' must be an object"),
        (
            {"permissions": {"deny": "Bash(rm:*)", "ask": ["Bash(git push:*)"]}},
            ".claude/settings.json: 'permissions.deny' must be a list of rules; ignored",
        ),
        (
            {"permissions": {"deny": [3, "Bash(git push:*)"]}},
            ".claude/settings.json: permissions.deny has a non-text entry; it is ignored",
        ),
        (
            {"permissions": {"deny": ["Bash(", "Bash(git push:*)"]}},
            ".claude/settings.json: permissions.deny: 'Bash(' is not a rule; ignored",
        ),
    ],
)
def test_a_broken_file_is_one_line_naming_it_and_the_rest_still_holds(
    places: tuple[Path, Path], content: Any, warning: str
) -> None:
    workspace, home = places
    _write(workspace / ".claude" / "settings.json", content)
    _write(workspace / ".claude" / "settings.local.json", _permissions(deny=["Bash(curl:*)"]))

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})
    check = _check(config.permissions, workspace, home)

    assert len(config.permissions.warnings) == 1
    assert config.permissions.warnings[0].startswith(warning)
    assert "\n" not in config.permissions.warnings[0]
    assert _verdict(check, "curl x") is Verdict.DENY
    kept = "Bash(git push:*)" in json.dumps(content)
    assert (_verdict(check, "git push") is not None) is kept


def test_rules_for_tools_this_agent_lacks_are_kept_listed_as_ignored_and_match_nothing(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    _write(
        home / ".claude" / "settings.json",
        _permissions(
            allow=["WebFetch(domain:example.com)", "ToolSearch", "mcp__github__*", "Read"],
            deny=["NotebookEdit"],
        ),
    )

    found = read_claude_rules(workspace, {"HOME": str(home)})
    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})
    check = _check(config.permissions, workspace, home)
    notes = {rule.text: rule.note for rule in check.listing()}
    shown = rendered(permissions_table(check.listing(), ["x.json: not valid JSON"]), width=120)

    assert found.warnings == []
    assert notes == {
        "NotebookEdit": "ignored: no NotebookEdit tool here",
        "WebFetch(domain:example.com)": "",
        "ToolSearch": "ignored: no ToolSearch tool here",
        "mcp__github__*": "",
        "Read": "",
    }
    assert _verdict(check, "ls") is None
    assert "ignored: no ToolSearch tool here" in shown
    assert "~/.claude/settings.json" in shown
    assert "! x.json: not valid JSON" in shown


def test_a_refusal_names_the_file_the_rule_came_from(places: tuple[Path, Path]) -> None:
    workspace, home = places
    _write(workspace / ".claude" / "settings.json", _permissions(deny=["Read(./.env)"]))
    (workspace / ".env").write_text("KEY=1\n")

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)})
    check = _check(config.permissions, workspace, home)

    assert check.refuses_read(workspace.resolve() / ".env") == (
        "refused by the permission rule deny: Read(./.env) (from .claude/settings.json)"
    )


def test_an_agent_yaml_holding_nothing_leaves_the_question_to_the_claude_file(
    places: tuple[Path, Path],
) -> None:
    workspace, home = places
    (workspace / "agent.yaml").write_text("max_steps: 9\n")
    _write(workspace / ".claude" / "settings.json", _permissions(allow=["Bash(make:*)"]))
    asked: list[Path] = []

    def say_yes(path: Path, settings: dict[str, Any]) -> bool:
        asked.append(path)
        return True

    config, _ = load_config(cwd=workspace, environ={"HOME": str(home)}, trust=say_yes)

    assert asked == [workspace / ".claude" / "settings.json"]
    assert (config.max_steps, config.permissions.allow) == (9, ["Bash(make:*)"])
