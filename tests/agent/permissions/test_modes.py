"""The session's mode by Claude Code's names, over the approval mode and plan mode: one
object, one way to change it, an event for every change."""

from __future__ import annotations

import pytest

from agent.permissions.modes import ModeChanged, Modes
from providers import Event
from tools.hooks import ApprovalMode


def _modes(approval: ApprovalMode = ApprovalMode.ASK, **kw: bool) -> tuple[Modes, list[Event]]:
    seen: list[Event] = []
    return Modes(approval, emit=seen.append, **kw), seen


@pytest.mark.parametrize(
    ("bypass", "cycle"),
    [
        (False, ["acceptEdits", "plan", "default", "acceptEdits"]),
        (True, ["acceptEdits", "plan", "bypassPermissions", "default"]),
    ],
)
def test_shift_tab_cycles_in_claude_codes_order(bypass: bool, cycle: list[str]) -> None:
    modes, seen = _modes(may_bypass=bypass)

    assert [modes.cycle() for _ in cycle] == cycle
    assert modes.mode == cycle[-1]
    assert seen == [
        ModeChanged(mode=now, previous=before)
        for before, now in zip(["default", *cycle], cycle, strict=False)
    ]


def test_plan_mode_keeps_the_approval_under_it() -> None:
    modes, seen = _modes(ApprovalMode.AUTO_EDIT)

    modes.switch("plan")
    assert (modes.mode, modes.approval, modes.plan_mode) == ("plan", ApprovalMode.AUTO_EDIT, True)
    modes.plan(False)  # an approved plan

    assert modes.mode == "acceptEdits"
    assert [(e.previous, e.mode) for e in seen if isinstance(e, ModeChanged)] == [
        ("acceptEdits", "plan"),
        ("plan", "acceptEdits"),
    ]


def test_a_session_started_in_bypass_may_cycle_back_to_it() -> None:
    modes, _ = _modes(ApprovalMode.FULL_AUTO)

    assert [modes.cycle() for _ in range(4)] == [
        "default",
        "acceptEdits",
        "plan",
        "bypassPermissions",
    ]
    assert modes.carried_on(None).may_bypass


def test_a_session_started_in_bypass_without_it_in_the_cycle_goes_back_to_default() -> None:
    modes, _ = _modes(ApprovalMode.FULL_AUTO, may_bypass=False)

    assert modes.cycle() == "default"


def test_no_change_no_event_and_an_unknown_mode_is_refused_naming_the_known_ones() -> None:
    modes, seen = _modes()

    modes.switch("default")
    modes.plan(False)
    with pytest.raises(ValueError, match="'yolo' is not one of default, acceptEdits, plan"):
        modes.switch("yolo")

    assert modes.mode == "default"
    assert seen == []


def test_the_new_agent_of_a_clear_keeps_the_mode_and_says_nothing() -> None:
    modes, seen = _modes()
    modes.switch("plan")
    later: list[Event] = []

    carried = modes.carried_on(later.append)
    carried.plan(False)

    assert (modes.mode, carried.mode) == ("plan", "default")
    assert later == [ModeChanged(mode="default", previous="plan")]
    assert len(seen) == 1
