"""Histories the loop and a resume really produce map to wire messages both APIs accept.

The rules checked (tests/fakes/vendor_rules.py) are the ones each API enforces with a 400 that
would then repeat on every later request of the session (the stored history is sent again).
"""

from __future__ import annotations

import pytest

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import to_anthropic_messages
from providers.adapters.openai_mapping import to_openai_messages
from sessions.repair import repair_history
from tests.fakes.vendor_rules import anthropic_problems, openai_problems


def assert_sendable(history: list[Message]) -> None:
    assert anthropic_problems(to_anthropic_messages(history)) == []
    assert openai_problems(to_openai_messages("system", history)) == []


def _call(call_id: str) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name="read_file", input={"path": "a.py"})


def _result(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call_id, content="text")


HISTORIES: dict[str, list[Message]] = {
    # The model ended a turn without writing anything (a refusal often looks like this).
    "empty assistant reply": [
        Message.user("hi"),
        Message(role="assistant", content=[]),
        Message.user("hello?"),
    ],
    "assistant reply of one empty text block": [
        Message.user("hi"),
        Message.assistant(""),
        Message.user("hello?"),
    ],
    "assistant reply of only whitespace": [
        Message.user("hi"),
        Message.assistant("\n\n"),
        Message.user("hello?"),
    ],
    "whitespace text before a tool call": [
        Message.user("hi"),
        Message(role="assistant", content=[TextBlock(text="\n"), _call("t1")]),
        Message(role="user", content=[_result("t1")]),
        Message.assistant("done"),
    ],
    "text after a tool call": [
        Message.user("hi"),
        Message(role="assistant", content=[_call("t1"), TextBlock(text="then this")]),
        Message(role="user", content=[_result("t1"), TextBlock(text="and a note")]),
        Message.assistant("done"),
    ],
    "a prompt left unanswered by an interrupted turn, then another": [
        Message.user("first"),
        Message.user("second"),
    ],
}


@pytest.mark.parametrize("name", list(HISTORIES))
def test_live_history_maps_to_valid_wire_messages(name: str) -> None:
    assert_sendable(HISTORIES[name])


@pytest.mark.parametrize("name", list(HISTORIES))
def test_repaired_history_maps_to_valid_wire_messages(name: str) -> None:
    repaired, _ = repair_history(HISTORIES[name])
    assert_sendable(repaired)


def test_repaired_crash_mid_tool_call_maps_to_valid_wire_messages() -> None:
    crashed = [
        Message.user("hi"),
        Message(role="assistant", content=[TextBlock(text=""), _call("t1"), _call("t2")]),
        Message(role="user", content=[_result("t2")]),
    ]
    repaired, notes = repair_history(crashed)
    assert notes
    assert_sendable(repaired)
