from __future__ import annotations

import pytest

from compaction.conversation import (
    COMPACTION_MARK,
    conversation_problems,
    cut,
    cut_points,
    latest_prompt_index,
)
from providers import Message, TextBlock, ToolResultBlock
from tests.compaction.conversations import step


def test_a_valid_conversation_has_no_problems() -> None:
    messages = [Message.user("hi"), *step(["a", "b"]), Message.assistant("done")]
    assert conversation_problems(messages) == []


def test_problems_name_what_is_wrong() -> None:
    orphan = Message(role="user", content=[ToolResultBlock(tool_use_id="zz", content="x")])
    unanswered = step(["a"])[0]
    assert any("start with a user" in p for p in conversation_problems([Message.assistant("x")]))
    assert any("both user" in p for p in conversation_problems([Message.user("a")] * 2))
    assert conversation_problems([Message.user("a"), Message.assistant("b"), orphan])
    assert conversation_problems([Message.user("a"), unanswered, Message.user("b")])


def test_an_unanswered_call_is_allowed_only_at_the_end() -> None:
    assert conversation_problems([Message.user("a"), step(["a"])[0]]) == []


def test_cut_points_never_fall_on_tool_results() -> None:
    messages = [Message.user("p0"), *step(["a"]), Message.assistant("x"), Message.user("p1")]
    # 0 p0, 1 call, 2 results, 3 answer, 4 p1
    assert cut_points(messages) == [1, 3, 4]
    assert latest_prompt_index(messages) == 4


def test_cut_merges_the_note_into_the_kept_prompt() -> None:
    messages = [Message.user("p0"), Message.assistant("a0"), Message.user("p1")]
    out = cut(messages, 2, f"{COMPACTION_MARK}: note]")
    assert len(out) == 1
    assert [b.text for b in out[0].content if isinstance(b, TextBlock)] == [
        f"{COMPACTION_MARK}: note]",
        "p1",
    ]


def test_cut_inside_the_latest_turn_carries_the_prompt_forward() -> None:
    messages = [Message.user("do it"), *step(["a"]), *step(["b"]), Message.assistant("done")]
    out = cut(messages, 3, f"{COMPACTION_MARK}: summary]")
    assert out[0].text.endswith("do it")
    assert out[1:] == messages[3:]
    assert conversation_problems(out) == []


def test_an_older_note_is_replaced_not_stacked() -> None:
    first = [
        Message(role="user", content=[TextBlock(text=f"{COMPACTION_MARK} 1]"), TextBlock(text="q")])
    ]
    again = cut([*first, *step(["a"]), Message.assistant("c")], 3, f"{COMPACTION_MARK} 2]")
    texts = [b.text for m in again for b in m.content if isinstance(b, TextBlock)]
    assert texts == [f"{COMPACTION_MARK} 2]", "q", "c"]


def test_an_unsafe_cut_is_refused() -> None:
    messages = [Message.user("p0"), *step(["a"]), Message.assistant("x")]
    with pytest.raises(ValueError, match="safe cut"):
        cut(messages, 2, "note")
