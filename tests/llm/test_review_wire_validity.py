"""Histories the loop and a resume really produce map to wire messages both APIs accept.

The rules checked here are the ones each API enforces with a 400 that would then repeat on
every later request of the session (the stored history is sent again each time).
"""

from __future__ import annotations

from typing import Any

import pytest

from agent.llm import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agent.llm.anthropic_mapping import to_anthropic_messages
from agent.llm.openai_mapping import to_openai_messages
from sessions.repair import repair_history


def anthropic_problems(wire: list[dict[str, Any]]) -> list[str]:
    """What the Messages API would reject in ``wire``."""
    problems: list[str] = []
    if wire and wire[0]["role"] != "user":
        problems.append("first message is not from the user")
    for index, message in enumerate(wire):
        content = message["content"]
        if not content:
            problems.append(f"messages.{index}: empty content")
        texts = [block["text"] for block in content if block["type"] == "text"]
        if texts and not "".join(texts).strip():
            problems.append(f"messages.{index}: text blocks without non-whitespace text")
        if any(block["type"] == "text" and not block["text"] for block in content):
            problems.append(f"messages.{index}: an empty text block")
        calls = [block["id"] for block in content if block["type"] == "tool_use"]
        if calls:
            following = wire[index + 1]["content"] if index + 1 < len(wire) else []
            answered = [b["tool_use_id"] for b in following[: len(calls)]]
            if sorted(answered) != sorted(calls):
                problems.append(f"messages.{index}: tool_use without tool_result right after")
    return problems


def openai_problems(wire: list[dict[str, Any]]) -> list[str]:
    """What Chat Completions would reject in ``wire``."""
    problems: list[str] = []
    open_calls: set[str] = set()
    for index, message in enumerate(wire):
        if message["role"] == "tool":
            if message["tool_call_id"] not in open_calls:
                problems.append(f"messages.{index}: tool message without its call")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"messages.{index}: tool calls {sorted(open_calls)} unanswered")
            open_calls = set()
        if message["role"] == "assistant":
            if message.get("content") is None and not message.get("tool_calls"):
                problems.append(f"messages.{index}: assistant without content or tool_calls")
            open_calls = {call["id"] for call in message.get("tool_calls") or []}
    if open_calls:
        problems.append("the last tool calls are unanswered")
    return problems


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
