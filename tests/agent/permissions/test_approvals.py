"""What the approval prompt allowed: a rule in force, listed with where it came from, and
taken back by ``/permissions remove``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.permissions import PermissionCheck, PermissionSettings, ProjectRules
from agent.permissions.claude_files import origin_key
from agent.permissions.rules import Call, Verdict
from agent.terminal.permissions_view import permissions_command


def _check(places: tuple[Path, Path], **rules: list[str]) -> PermissionCheck:
    workspace, home = places
    settings = PermissionSettings(**rules).with_origins(
        {origin_key(kind, text): "agent.yaml" for kind, texts in rules.items() for text in texts}
    )
    return PermissionCheck(
        settings, ProjectRules(home / "agent", workspace), workspace=workspace, home=home
    )


def _verdict(check: PermissionCheck, tool: str) -> Verdict | None:
    found = check.rules.verdict(Call(tool, "edit", paths=()))
    return None if found is None else found[0]


def test_always_for_a_tool_is_listed_carried_over_and_taken_back(
    places: tuple[Path, Path],
) -> None:
    check = _check(places)
    check.allow_for_session("write_file")

    [listed] = check.listing()
    assert (listed.kind, listed.text, listed.removable) == ("allow", "write_file", True)
    assert listed.origin.startswith("this session")
    assert _verdict(check, "write_file") is Verdict.ALLOW
    again = PermissionCheck(
        PermissionSettings(), None, workspace=places[0], home=places[1], granted=check.granted
    )  # the agent a /clear builds
    assert [rule.text for rule in again.listing()] == ["write_file"]

    assert check.forget("write_file") == "Removed allow write_file."
    assert check.listing() == []
    assert _verdict(check, "write_file") is None


def test_a_rule_from_a_file_is_not_removed_here_but_named(places: tuple[Path, Path]) -> None:
    check = _check(places, allow=["write_file"], deny=["Read(./.env)"])
    check.allow_for_session("write_file")  # also in agent.yaml

    assert check.forget("write_file") == "Removed allow write_file; still allowed by agent.yaml."
    assert _verdict(check, "write_file") is Verdict.ALLOW
    with pytest.raises(ValueError, match=r"write_file comes from agent.yaml: remove it there"):
        check.forget("write_file")
    shown = str(permissions_command(check, "remove 1"))  # the deny rule
    assert "deny Read(./.env) comes from agent.yaml: remove it there." in shown
    assert "is not a rule in force" in str(permissions_command(check, "remove Edit"))


def test_a_saved_prefix_rule_is_removed_from_the_projects_file(places: tuple[Path, Path]) -> None:
    check = _check(places)
    check.remember("run_command(touch *)")
    store = ProjectRules(places[1] / "agent", places[0])
    assert store.load() == ["run_command(touch *)"]

    said = check.forget("run_command(touch *)")

    assert said == "Removed allow run_command(touch *) (and from this project's saved rules)."
    assert store.load() == []
    assert _check(places).listing() == []
