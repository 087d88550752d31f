from __future__ import annotations

from compaction import TokenCounter, conversation_problems, drop_oldest_turns, snip_tool_results
from compaction.stages import SNIP_MARK, choose_cut
from providers import Message, ToolResultBlock
from tests.compaction.conversations import step

estimate = TokenCounter().estimate


def _results(messages: list[Message]) -> list[ToolResultBlock]:
    return [r for m in messages for r in m.tool_results]


def test_snip_keeps_the_last_k_results_whole() -> None:
    messages = [Message.user("go"), *step(["a", "b"]), *step(["c"]), *step(["d"])]
    messages.append(Message.assistant("done"))
    out = snip_tool_results(messages, keep_last=2)
    contents = {r.tool_use_id: r.content for r in _results(out)}
    assert contents["a"].startswith(SNIP_MARK)
    assert contents["b"].startswith(SNIP_MARK)
    assert contents["c"] == messages[4].tool_results[0].content
    assert contents["d"] == messages[6].tool_results[0].content
    assert conversation_problems(out) == []


def test_the_marker_says_how_to_get_the_output_back() -> None:
    messages = [Message.user("go"), *step(["a"], result_size=500), Message.assistant("ok")]
    marker = _results(snip_tool_results(messages, keep_last=0))[0].content
    assert 'read_file(path="a.py")' in marker
    assert "502 characters" in marker


def test_results_the_model_has_not_read_are_never_snipped() -> None:
    messages = [Message.user("go"), *step(["a"]), *step(["b", "c"])]
    out = snip_tool_results(messages, keep_last=0)
    assert out[-1] is messages[-1]
    assert _results(out)[0].content.startswith(SNIP_MARK)


def test_short_or_already_snipped_results_are_left_alone() -> None:
    messages = [Message.user("go"), *step(["a"], result_size=3), Message.assistant("ok")]
    assert snip_tool_results(messages, keep_last=0) == messages
    long = [Message.user("go"), *step(["a"], result_size=900), Message.assistant("ok")]
    once = snip_tool_results(long, keep_last=0)
    assert snip_tool_results(once, keep_last=0) == once


def test_snip_does_not_mutate_its_input() -> None:
    messages = [Message.user("go"), *step(["a"], result_size=900), Message.assistant("ok")]
    copy = [m.model_copy(deep=True) for m in messages]
    snip_tool_results(messages, keep_last=0)
    assert messages == copy


def test_choose_cut_keeps_as_much_tail_as_fits() -> None:
    messages = [Message.user("p0"), *step(["a"], result_size=4_000), Message.assistant("x")]
    messages += [Message.user("p1"), Message.assistant("y")]
    # 0 p0, 1 call, 2 result, 3 x, 4 p1, 5 y
    assert choose_cut(messages, tail_budget=100, estimate=estimate) == 3
    assert choose_cut(messages, tail_budget=0, estimate=estimate) == 5
    assert choose_cut([Message.user("alone")], tail_budget=0, estimate=estimate) is None


def test_drop_removes_the_oldest_turns_until_under_target() -> None:
    messages: list[Message] = []
    for turn in range(5):
        messages += [Message.user(f"p{turn} " + "x" * 400), Message.assistant(f"a{turn}")]
    messages.append(Message.user("latest"))
    out = drop_oldest_turns(messages, target_tokens=300, estimate=estimate)
    assert estimate(out) <= 300
    assert out[-1] == messages[-1]
    assert out[0].text.startswith("[Context compacted")
    assert "a4" in [m.text for m in out]  # only as much as needed is dropped
    assert conversation_problems(out) == []


def test_drop_keeps_the_latest_prompt_even_when_nothing_fits() -> None:
    messages = [Message.user("do the thing"), *step(["a"], result_size=8_000), *step(["b"])]
    out = drop_oldest_turns(messages, target_tokens=1, estimate=estimate)
    assert "do the thing" in out[0].text
    assert out[1:] == messages[-2:]
    assert conversation_problems(out) == []


def test_drop_is_a_no_op_under_target() -> None:
    messages = [Message.user("a"), Message.assistant("b")]
    assert drop_oldest_turns(messages, target_tokens=10_000, estimate=estimate) == messages


def test_keeping_more_than_there_are_snips_nothing() -> None:
    messages = [Message.user("go"), *step(["a"], result_size=900), Message.assistant("ok")]
    assert snip_tool_results(messages, keep_last=4) == messages
