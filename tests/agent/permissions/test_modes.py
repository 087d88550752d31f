"""The session's mode by Claude Code's names, over the approval mode and plan mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.permissions import PermissionCheck, PermissionSettings
from agent.permissions.modes import current_mode, next_mode, set_mode
from tools.hooks import ApprovalMode


def _check(tmp_path: Path, approval: ApprovalMode = ApprovalMode.ASK) -> PermissionCheck:
    return PermissionCheck(
        PermissionSettings(), None, workspace=tmp_path, home=tmp_path, approval=approval
    )


@pytest.mark.parametrize(
    ("bypass", "cycle"),
    [
        (False, ["acceptEdits", "plan", "default", "acceptEdits"]),
        (True, ["acceptEdits", "plan", "bypassPermissions", "default"]),
    ],
)
def test_shift_tab_cycles_in_claude_codes_order(
    tmp_path: Path, bypass: bool, cycle: list[str]
) -> None:
    check = _check(tmp_path)

    assert [next_mode(check, bypass=bypass) for _ in cycle] == cycle
    assert current_mode(check) == cycle[-1]


def test_plan_mode_keeps_the_approval_under_it(tmp_path: Path) -> None:
    check = _check(tmp_path, ApprovalMode.AUTO_EDIT)

    set_mode(check, "plan")

    assert (current_mode(check), check.approval) == ("plan", ApprovalMode.AUTO_EDIT)
    check.plan_mode = False  # an approved plan
    assert current_mode(check) == "acceptEdits"


def test_a_session_started_in_bypass_without_it_in_the_cycle_goes_back_to_default(
    tmp_path: Path,
) -> None:
    check = _check(tmp_path, ApprovalMode.FULL_AUTO)

    assert next_mode(check, bypass=False) == "default"


def test_an_unknown_mode_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    check = _check(tmp_path)

    with pytest.raises(ValueError, match="'yolo' is not one of default, acceptEdits, plan"):
        set_mode(check, "yolo")
    assert current_mode(check) == "default"
