"""The rules of a valid conversation: any stored history, cut anywhere and repaired, is sendable.

"Sendable" is judged by strict validators of each vendor's rules (tests/fakes/vendor_rules.py)
applied to what our adapters' mappings put on the wire.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers import Message, TextBlock, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import to_anthropic_messages
from providers.adapters.openai_mapping import to_openai_messages
from providers.conversation import (
    EMPTY_REPLY,
    answer_dangling_calls,
    conversation_problems,
    interrupted_text,
    is_interrupted_result,
    merge_consecutive,
    non_empty_reply,
)
from sessions.repair import repair_history
from tests.compaction.conversations import unique_call_ids
from tests.fakes.vendor_rules import anthropic_problems, openai_problems

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _call(call_id: str, name: str = "run_command") -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name=name, input={"command": "sleep 30"})


def _result(call_id: str, text: str = "ok") -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call_id, content=text)


def assert_sendable(messages: list[Message]) -> None:
    assert conversation_problems(messages) == []
    assert anthropic_problems(to_anthropic_messages(messages)) == []
    assert openai_problems(to_openai_messages("system", messages)) == []


# -- the rules, one by one ---------------------------------------------------------------


def test_each_rule_is_named() -> None:
    assert "start with a user" in conversation_problems([Message.assistant("x")])[0]
    assert "both user" in conversation_problems([Message.user("a"), Message.user("b")])[0]
    assert "empty" in conversation_problems([Message.user(" \n")])[0]
    unanswered = [Message.user("a"), Message(role="assistant", content=[_call("t1")])]
    assert "never answered" in conversation_problems(unanswered)[0]
    assert conversation_problems(unanswered, open_end=True) == []
    text_first = [*unanswered, Message(role="user", content=[TextBlock(text="x"), _result("t1")])]
    assert "text before its tool results" in conversation_problems(text_first)[0]
    orphan = [
        Message.user("a"),
        Message.assistant("b"),
        Message(role="user", content=[_result("x")]),
    ]
    assert "answers calls ['x']" in conversation_problems(orphan)[0]


def test_dangling_calls_are_answered_with_the_one_interrupted_text() -> None:
    history = [
        Message.user("build"),
        Message(role="assistant", content=[_call("t1", "write_file"), _call("t2")]),
        Message(role="user", content=[_result("t2")]),
        Message(role="assistant", content=[_call("t3")]),
    ]

    answered = answer_dangling_calls(history, "the agent was stopped")

    assert answered[:2] == history[:2]
    first, second = answered[2].tool_results
    assert first.content == interrupted_text("write_file", "the agent was stopped")
    assert first.is_error
    assert is_interrupted_result(first)
    assert second == _result("t2")
    assert len(answered) == 5  # the last call gets a message of its own, appended
    assert is_interrupted_result(answered[4].content[0])
    assert_sendable(answered)


def test_a_prompt_after_tool_results_joins_their_message_after_them() -> None:
    history = [
        Message.user("build"),
        Message(role="assistant", content=[_call("t1")]),
        Message(role="user", content=[_result("t1", "interrupted")]),
        Message.user("Continue the task."),
    ]

    merged = merge_consecutive(history)

    assert merged[-1].content == [
        _result("t1", "interrupted"),
        TextBlock(text="Continue the task."),
    ]
    assert_sendable(merged)
    openai = to_openai_messages("system", merged)
    assert [m["role"] for m in openai[-2:]] == ["tool", "user"]


def test_an_empty_reply_becomes_the_placeholder() -> None:
    assert non_empty_reply(Message(role="assistant", content=[])) == Message.assistant(EMPTY_REPLY)
    assert non_empty_reply(Message.assistant(" \n")) == Message.assistant(EMPTY_REPLY)
    kept = Message(role="assistant", content=[TextBlock(text=""), _call("t1")])
    assert non_empty_reply(kept) is kept


# -- properties ---------------------------------------------------------------------------

_ids = st.sampled_from(["a", "b", "c", "d", "e"])
_texts = st.sampled_from(["hi", "more", "", "  \n"])
_user_block = st.one_of(
    st.builds(TextBlock, text=_texts),
    st.builds(ToolResultBlock, tool_use_id=_ids, content=st.just("r"), is_error=st.booleans()),
)
_assistant_block = st.one_of(
    st.builds(TextBlock, text=_texts),
    st.builds(ToolUseBlock, id=_ids, name=st.just("read_file")),
)
_record = st.one_of(
    st.builds(Message, role=st.just("user"), content=st.lists(_user_block, max_size=4)),
    st.builds(Message, role=st.just("assistant"), content=st.lists(_assistant_block, max_size=4)),
)


@st.composite
def loop_records(draw: st.DrawFn, live: bool = False) -> list[Message]:
    """Messages in the order the loop appends them: prompt, reply, results, reply, ...

    With ``live``, every call is answered (as the loop does); otherwise a crash may have
    kept only some results.
    """
    records: list[Message] = []
    ids = iter(range(1000))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        records.append(Message.user(draw(st.sampled_from(["fix it", "go on"]))))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            calls = [_call(f"t{next(ids)}") for _ in range(draw(st.integers(1, 3)))]
            preface = [TextBlock(text=draw(_texts))] if draw(st.booleans()) else []
            records.append(Message(role="assistant", content=[*preface, *calls]))
            done = len(calls) if live else draw(st.integers(0, len(calls)))
            records.append(Message(role="user", content=[_result(c.id) for c in calls[:done]]))
        records.append(non_empty_reply(Message.assistant(draw(_texts))))
    return records


@PROPERTY
@given(st.lists(_record, max_size=12), st.integers(min_value=0, max_value=12))
def test_any_records_cut_anywhere_and_repaired_are_sendable(
    records: list[Message], cut: int
) -> None:
    stored = unique_call_ids(records)[:cut]

    repaired, _ = repair_history(stored)

    if repaired:
        assert_sendable(repaired)
    # What a resume sends next: the repaired history plus the person's new prompt.
    assert_sendable(merge_consecutive([*repaired, Message.user("Continue the task.")]))


@PROPERTY
@given(loop_records(), st.integers(min_value=0, max_value=40))
def test_a_turn_cut_anywhere_is_repaired_without_losing_a_record(
    records: list[Message], cut: int
) -> None:
    stored = [message for message in records[:cut] if message.content]

    repaired, _ = repair_history(stored)

    if repaired:
        assert_sendable(repaired)
    kept = [block for message in stored for block in message.content if block.type != "text"]
    after = [block for message in repaired for block in message.content if block.type != "text"]
    assert [b for b in after if not is_interrupted_result(b)] == kept
    resumed = merge_consecutive([*repaired, Message.user("Continue the task.")])
    assert_sendable(resumed)
    assert resumed[-1].text.endswith("Continue the task.")


@PROPERTY
@given(loop_records(live=True), st.data())
def test_live_interruption_closes_the_turn_by_appending_only(
    records: list[Message], data: st.DataObject
) -> None:
    # Live, the loop is interrupted after a reply, whose calls may be unanswered.
    replies = [i + 1 for i, message in enumerate(records) if message.role == "assistant"]
    live = records[: data.draw(st.sampled_from(replies))]

    answered = answer_dangling_calls(live, "the turn was stopped")

    assert answered[: len(live)] == live
    assert len(answered) == len(live) + bool(live[-1].tool_uses)
    assert_sendable(answered)
