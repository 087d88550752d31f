"""The words for a session on a fallback and for a wait told to another agent."""

from __future__ import annotations

from datetime import datetime

from agent.terminal.status_line import StatusLine, detour_text, duration_text
from recovery import DetourView, RequestHeld
from tests.fakes.clock import VirtualClock

NOW = datetime(2026, 1, 5, 12, 5, 0)


def view(**fields: object) -> DetourView:
    defaults: dict[str, object] = {
        "primary": "anthropic:a",
        "fallback": "openai:b",
        "since_ago": 120.0,
        "reason": "3 overloads in a row",
        "next_trial_in": 180.0,
        "stays_because": None,
    }
    return DetourView(**(defaults | fields))  # type: ignore[arg-type]


def test_a_returning_fallback_says_since_when_and_when_the_primary_is_tried() -> None:
    assert detour_text(view(), NOW) == (
        "on fallback openai:b since 12:03 (anthropic:a: 3 overloads in a row), "
        "next try of anthropic:a at 12:08"
    )


def test_a_fallback_for_good_says_why() -> None:
    text = detour_text(view(next_trial_in=None, stays_because="the API key was refused"), NOW)
    assert text.endswith(", for the rest of the session: the API key was refused")


def test_durations_read_short() -> None:
    assert [duration_text(s) for s in (45, 720, 3900)] == ["45s", "12m", "1h05m"]


def test_the_status_line_counts_down_a_wait_told_to_another_agent() -> None:
    clock = VirtualClock()
    line = StatusLine(clock=clock.now)
    held = RequestHeld(
        model="anthropic:a", delay=4, retry_at=clock.now() + 4, server=True, other_agent=True
    )
    line.waiting(held)
    assert line.text().plain.startswith(
        "anthropic:a: the API asked another agent on this key to slow down — sending in 4s"
    )
