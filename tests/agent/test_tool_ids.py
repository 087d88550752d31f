"""Tool-call ids made unique per session."""

from __future__ import annotations

from agent.engine.tool_ids import MAX_ID_LENGTH, ToolCallIds
from providers import Message, TextBlock, ToolUseBlock


def _calls(*ids: str) -> Message:
    return Message(
        role="assistant",
        content=[
            TextBlock(text="doing it"),
            *(ToolUseBlock(id=i, name="t", input={}) for i in ids),
        ],
    )


def test_unique_ids_are_kept_and_the_message_is_unchanged() -> None:
    message = _calls("a", "b")
    assert ToolCallIds().assign(message) is message


def test_repeats_get_a_deterministic_suffix_and_text_is_kept() -> None:
    ids = ToolCallIds(["a"])
    renamed = ids.assign(_calls("a", "a", "a_2"))
    assert [use.id for use in renamed.tool_uses] == ["a_2", "a_3", "a_2_2"]
    assert renamed.text == "doing it"
    assert [use.id for use in ToolCallIds(["a"]).assign(_calls("a", "a", "a_2")).tool_uses] == [
        "a_2",
        "a_3",
        "a_2_2",
    ]


def test_empty_long_or_unsafe_ids_are_made_acceptable_to_both_apis() -> None:
    renamed = ToolCallIds().assign(_calls("", "x" * 80, "x" * 80, "call 1/\n"))
    got = [use.id for use in renamed.tool_uses]
    assert got[0] == "call"
    assert got[1] == "x" * MAX_ID_LENGTH
    assert got[2] == "x" * (MAX_ID_LENGTH - 2) + "_2"
    assert got[3] == "call_1__"
    assert len(set(got)) == len(got)
