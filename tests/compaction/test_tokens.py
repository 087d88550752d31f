from __future__ import annotations

from compaction import CompactionSettings, ContextBudget, TokenCounter
from compaction.tokens import MESSAGE_OVERHEAD_TOKENS
from providers import Message, ToolSpec, Usage
from providers.models import ModelLimits
from tests.compaction.conversations import step


def test_an_uncalibrated_count_estimates_everything_including_system_and_tools() -> None:
    counter = TokenCounter(chars_per_token=4)
    tool = ToolSpec(name="read_file", description="d" * 100, input_schema={})
    messages = [Message.user("x" * 400)]
    bare = counter.count(messages)
    assert bare == 100 + MESSAGE_OVERHEAD_TOKENS
    assert counter.count(messages, system="s" * 400, tools=[tool]) > bare + 100 + 25


def test_tool_inputs_and_results_are_counted() -> None:
    counter = TokenCounter()
    small = counter.estimate(step(["a"], result_size=10))
    large = counter.estimate(step(["a"], result_size=4_000))
    assert abs((large - small) - 3_990 / 4) <= 1  # 3,990 more characters of result


def test_reported_usage_is_the_truth_for_what_it_covered() -> None:
    counter = TokenCounter()
    request = [Message.user("hello " * 1_000)]
    answer = Message.assistant("hi")
    counter.observe([*request, answer], Usage(input_tokens=5_000, output_tokens=7))
    assert counter.count([*request, answer], system="ignored once calibrated") == 5_007
    new = Message.user("y" * 40)
    assert counter.count([*request, answer, new]) == 5_007 + counter.estimate([new])


def test_cached_tokens_count_too() -> None:
    counter = TokenCounter()
    messages = [Message.user("a"), Message.assistant("b")]
    counter.observe(messages, Usage(input_tokens=10, cache_read_tokens=900, output_tokens=5))
    assert counter.count(messages) == 915


def test_a_diverged_tail_is_re_estimated() -> None:
    counter = TokenCounter()
    prompt = Message.user("p" * 400)
    counter.observe(
        [prompt, Message.assistant("a" * 4_000)], Usage(input_tokens=300, output_tokens=900)
    )
    stitched = Message.assistant("a" * 40)
    expected = (
        1_200 - counter.estimate([Message.assistant("a" * 4_000)]) + counter.estimate([stitched])
    )
    assert counter.count([prompt, stitched]) == expected


def test_a_different_conversation_is_estimated_from_scratch() -> None:
    counter = TokenCounter()
    counter.observe([Message.user("a"), Message.assistant("b")], Usage(input_tokens=99_999))
    other = [Message.user("c" * 40)]
    assert counter.count(other) == counter.estimate(other)


def test_a_response_without_usage_does_not_calibrate() -> None:
    counter = TokenCounter()
    messages = [Message.user("a" * 400), Message.assistant("b")]
    counter.observe(messages, Usage())
    assert counter.count(messages) == counter.estimate(messages)


def test_the_configured_ratio_is_used() -> None:
    assert TokenCounter(chars_per_token=2).estimate_text(100) == 50


def test_budget_reserves_output_and_applies_fractions() -> None:
    settings = CompactionSettings()
    budget = ContextBudget.of(ModelLimits(200_000, 64_000), settings)
    assert budget.usable == 184_000  # the 16k reserve, not the 64k ceiling
    assert budget.threshold == int(184_000 * 0.8)
    assert budget.target == int(184_000 * 0.5)


def test_a_small_window_keeps_half_for_the_conversation() -> None:
    budget = ContextBudget.of(ModelLimits(2_048, 2_048), CompactionSettings())
    assert budget.usable == 1_024
