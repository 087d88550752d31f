"""Repair makes any stored history valid for both providers, without losing real results."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.conversation import conversation_problems
from sessions import history_problems, repair_history
from sessions.repair import is_synthetic_result, plainly_valid
from tests.compaction.conversations import conversations, unique_call_ids


def _call(call_id: str) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name="edit_file", input={"path": "a.py"})


def _result(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call_id, content=f"ok {call_id}")


def test_missing_results_go_right_after_the_calls_and_before_other_text() -> None:
    history = [
        Message.user("go"),
        Message(role="assistant", content=[_call("a"), _call("b"), _call("c")]),
        Message(role="user", content=[TextBlock(text="also this"), _result("b")]),
    ]

    repaired, notes = repair_history(history)

    blocks = repaired[2].content
    assert [type(block).__name__ for block in blocks] == [
        "ToolResultBlock",
        "ToolResultBlock",
        "ToolResultBlock",
        "TextBlock",
    ]
    assert [b.tool_use_id for b in repaired[2].tool_results] == ["a", "b", "c"]
    assert repaired[2].tool_results[1] == _result("b")
    assert [is_synthetic_result(b) for b in repaired[2].tool_results] == [True, False, True]
    assert len(notes) == 2
    assert history_problems(repaired) == []


def test_consecutive_assistant_messages_merge_and_their_calls_get_results() -> None:
    history = [
        Message.user("go"),
        Message(role="assistant", content=[_call("a")]),
        Message.assistant("I will carry on"),
    ]
    repaired, _ = repair_history(history)
    assert [m.role for m in repaired] == ["user", "assistant", "user"]
    assert repaired[1].content == [_call("a"), TextBlock(text="I will carry on")]
    assert is_synthetic_result(repaired[2].content[0])
    assert history_problems(repaired) == []


def test_orphan_results_and_duplicates_are_dropped() -> None:
    history = [
        Message.user("go"),
        Message(role="assistant", content=[_call("a")]),
        Message(role="user", content=[_result("a"), _result("a"), _result("zz")]),
        Message(role="user", content=[_result("a")]),
    ]
    repaired, notes = repair_history(history)
    assert repaired[2] == Message(role="user", content=[_result("a")])
    assert len(repaired) == 3
    assert len(notes) == 3


def test_a_valid_history_is_left_alone() -> None:
    history = [
        Message.user("go"),
        Message(role="assistant", content=[TextBlock(text="let me"), _call("a")]),
        Message(role="user", content=[_result("a")]),
        Message.assistant("done"),
    ]
    assert repair_history(history) == (history, [])


def test_history_starting_with_the_assistant_gets_a_user_placeholder() -> None:
    repaired, _ = repair_history([Message.assistant("hello"), Message.user("hi")])
    assert repaired[0].role == "user"
    assert history_problems(repaired) == []


_ids = st.sampled_from(["a", "b", "c", "d"])
_user_block = st.one_of(
    st.builds(TextBlock, text=st.sampled_from(["hi", "more"])),
    st.builds(ToolResultBlock, tool_use_id=_ids, content=st.just("r")),
)
_assistant_block = st.one_of(
    st.builds(TextBlock, text=st.sampled_from(["ok", "hm"])),
    st.builds(ToolUseBlock, id=_ids, name=st.just("read_file")),
)
_message = st.one_of(
    st.builds(Message, role=st.just("user"), content=st.lists(_user_block, max_size=4)),
    st.builds(Message, role=st.just("assistant"), content=st.lists(_assistant_block, max_size=4)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_message, max_size=12))
def test_any_history_repairs_to_one_both_providers_accept(messages: list[Message]) -> None:
    history = unique_call_ids(messages)
    repaired, _ = repair_history(history)
    assert history_problems(repaired) == []
    kept_calls = [use.id for m in history for use in m.tool_uses]
    assert [use.id for m in repaired for use in m.tool_uses] == kept_calls
    again, notes = repair_history(repaired)
    assert (again, notes) == (repaired, [])


_blank = st.sampled_from(["", " ", "\n\t", "\u2028", "\xa0", "\u3000"])
_mutations = st.sampled_from(
    [
        "drop block",
        "duplicate block",
        "swap blocks",
        "insert text",
        "blank text",
        "flip role",
        "rename id",
        "cut the end",
        "repeat a call",
    ]
)


@st.composite
def _near_valid(draw: st.DrawFn) -> list[Message]:
    """A valid conversation with one or two blocks or roles changed: the edge of validity."""
    messages = draw(conversations())
    for _ in range(draw(st.sampled_from([1, 1, 1, 2]))):
        mutation = draw(_mutations)
        if mutation == "cut the end" and len(messages) > 1:
            messages = messages[: draw(st.integers(min_value=1, max_value=len(messages) - 1))]
            continue
        if mutation == "repeat a call":
            messages = _repeat_first_call(messages)
            continue
        index = draw(st.integers(min_value=0, max_value=len(messages) - 1))
        message = messages[index]
        blocks = list(message.content)
        at = draw(st.integers(min_value=0, max_value=len(blocks) - 1)) if blocks else 0
        if mutation == "drop block" and blocks:
            del blocks[at]
        elif mutation == "duplicate block" and blocks:
            blocks.insert(at, blocks[at])
        elif mutation == "swap blocks" and len(blocks) > 1:
            blocks[at], blocks[at - 1] = blocks[at - 1], blocks[at]
        elif mutation == "insert text":
            blocks.insert(at, TextBlock(text="also"))
        elif mutation == "blank text" and blocks:
            blocks[at] = TextBlock(text=draw(_blank))
        elif mutation == "rename id" and blocks:
            block = blocks[at]
            if isinstance(block, ToolUseBlock):
                blocks[at] = block.model_copy(update={"id": draw(_ids)})
            elif isinstance(block, ToolResultBlock):
                blocks[at] = block.model_copy(update={"tool_use_id": draw(_ids)})
        role = message.role
        if mutation == "flip role":
            role = "user" if role == "assistant" else "assistant"
        messages[index] = Message(role=role, content=blocks)
    return messages


def _repeat_first_call(messages: list[Message]) -> list[Message]:
    """The first call made twice, and answered twice: each message alone looks fine."""
    for index, message in enumerate(messages[:-1]):
        if message.tool_uses and messages[index + 1].content:
            call, answer = message.content[-1], messages[index + 1].content[0]
            return [
                *messages[:index],
                Message(role="assistant", content=[*message.content, call]),
                Message(role="user", content=[answer, *messages[index + 1].content]),
                *messages[index + 2 :],
            ]
    return messages


@settings(max_examples=1000, deadline=None)
@given(_near_valid())
def test_the_quick_proof_never_passes_a_history_that_breaks_a_rule(
    messages: list[Message],
) -> None:
    if plainly_valid(messages):
        assert conversation_problems(messages) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(_message, max_size=8))
def test_the_quick_proof_never_passes_a_random_history_that_breaks_a_rule(
    messages: list[Message],
) -> None:
    if plainly_valid(messages):
        assert conversation_problems(messages) == []


@settings(max_examples=100, deadline=None)
@given(conversations())
def test_the_quick_proof_passes_every_history_the_loop_writes(messages: list[Message]) -> None:
    assert plainly_valid(messages)


def test_results_in_another_order_are_valid_though_not_proven_quickly() -> None:
    history = [
        Message.user("go"),
        Message(role="assistant", content=[_call("a"), _call("b")]),
        Message(role="user", content=[_result("b"), _result("a")]),
        Message.assistant("done"),
    ]
    assert not plainly_valid(history)
    assert repair_history(history) == (history, [])


def test_a_call_from_the_user_answered_by_the_assistant_is_not_proven() -> None:
    history = [
        Message.user("go"),
        Message.assistant("ok"),
        Message(role="user", content=[TextBlock(text="run it"), _call("a")]),
        Message(role="assistant", content=[_result("a"), TextBlock(text="ran")]),
    ]
    assert conversation_problems(history) != []
    assert not plainly_valid(history)
