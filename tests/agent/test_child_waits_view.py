"""A child's wait in the REPL: counted down on the child's own line, not as the turn's."""

from __future__ import annotations

from agent.engine.outcome import SubagentProgress, SubagentRecovery, SubagentStarted
from agent.terminal.ui import ConsoleUI, StatusSource
from providers import ErrorKind, Usage
from recovery import GaveUp, RequestHeld, RetryScheduled
from tests.agent.test_ui import plain, retry_event, terminal
from tests.fakes.clock import VirtualClock

WHO = {"agent_id": "child-1", "agent_type": "explore", "tool_use_id": "call-1"}


def childs(event: RetryScheduled | RequestHeld | GaveUp) -> SubagentRecovery:
    return SubagentRecovery(**WHO, recovery=event)


def test_a_childs_retry_counts_down_on_its_line_and_the_turn_goes_on(clock: VirtualClock) -> None:
    console, buffer = terminal(width=140)
    ui = ConsoleUI(console, clock=clock.now)
    ui.bind(StatusSource(model=lambda: "anthropic:parent", usage=Usage))
    ui.begin_turn()
    ui.on_event(SubagentStarted(**WHO, description="scan the tests"))
    ui.on_event(childs(retry_event(retry_at=clock.now() + 3.0)))
    [waiting] = [line.plain for line in ui.children.while_working()]
    status = ui.status.text().plain
    clock.advance(2.0)
    [later] = [line.plain for line in ui.children.while_working()]
    ui.on_event(SubagentProgress(agent_id="child-1", tool_use_id="call-1", tool="", tokens=9))
    [going] = [line.plain for line in ui.children.while_working()]
    ui.finish()

    assert "explore: scan the tests · Rate limited by anthropic, retrying in 3s (attempt 2/8)" in (
        waiting
    )
    assert "retrying in 1s" in later
    assert "retrying" not in status  # the parent's turn is not the one waiting
    assert "anthropic:parent" in status
    assert "thinking" in going
    assert "retrying" not in going
    assert "Rate limited" not in plain(buffer.getvalue())  # no banner on a terminal


def test_without_a_terminal_a_childs_retry_is_one_line_naming_it() -> None:
    out, _ = terminal(width=140)
    err, buffer = terminal(width=140)
    ui = ConsoleUI(out, err, clock=lambda: 0.0)
    held = RequestHeld(model="anthropic:claude-test", delay=2.0, retry_at=2.0, server=True)
    for event in (
        retry_event(retry_at=3.0),
        retry_event(retry_at=3.0, attempt=3),
        held,
        GaveUp(kind=ErrorKind.RATE_LIMIT, requests=3, waited=5, message="x"),
    ):
        ui.on_event(childs(event))

    lines = plain(buffer.getvalue()).splitlines()
    assert len(lines) == 2, lines  # the first retry and the wait; the give-up is the child's result
    assert lines[0].startswith("⏳ Sub-agent explore: Rate limited by anthropic — retrying in 3s")
    assert "Sub-agent explore: anthropic:claude-test: the server asked to wait" in lines[1]
    assert ui.status.retry is None
