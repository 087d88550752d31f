"""Invariants of every stage and any combination of them, over random valid conversations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction import (
    CompactionSettings,
    Compactor,
    TokenCounter,
    conversation_problems,
    cut,
    cut_points,
    drop_oldest_turns,
    latest_prompt_index,
    snip_tool_results,
)
from compaction.compactor import REACTIVE_STAGES
from compaction.conversation import COMPACTION_MARK, is_note
from compaction.stages import SNIP_MARK
from providers import Block, ChatRequest, ChatResponse, Message, ToolResultBlock, ToolUseBlock
from providers.models import ModelLimits
from providers.testing import ScriptedProvider, text
from tests.compaction.conversations import conversations

estimate = TokenCounter().estimate
Transform = Callable[[list[Message]], list[Message]]

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def transforms(draw: st.DrawFn) -> Transform:
    """One stage with random parameters; a summary is stood in for by a fixed note."""
    kind = draw(st.sampled_from(["snip", "drop", "summarise"]))
    if kind == "snip":
        keep = draw(st.integers(min_value=0, max_value=6))
        return lambda messages: snip_tool_results(messages, keep)
    if kind == "drop":
        target = draw(st.integers(min_value=0, max_value=5_000))
        return lambda messages: drop_oldest_turns(messages, target, estimate)
    pick = draw(st.integers(min_value=0, max_value=1_000))

    def summarise(messages: list[Message]) -> list[Message]:
        points = cut_points(messages)
        if not points:
            return messages
        return cut(messages, points[pick % len(points)], f"{COMPACTION_MARK}: summary]")

    return summarise


def _calls(messages: Sequence[Message]) -> dict[str, ToolUseBlock]:
    return {c.id: c for m in messages for c in m.tool_uses}


def _results(messages: Sequence[Message]) -> dict[str, ToolResultBlock]:
    return {r.tool_use_id: r for m in messages for r in m.tool_results}


def _ends_with(blocks: Sequence[Block], suffix: Sequence[Block]) -> bool:
    return len(blocks) >= len(suffix) and list(blocks[len(blocks) - len(suffix) :]) == list(suffix)


def assert_invariants(original: list[Message], out: list[Message]) -> None:
    assert conversation_problems(out) == [], conversation_problems(out)
    # Calls and results are the original ones, whole pairs only (validity checks pairing).
    calls, results = _calls(original), _results(original)
    for call_id, call in _calls(out).items():
        assert calls[call_id] == call
    for call_id, result in _results(out).items():
        kept = results[call_id]
        assert result.is_error == kept.is_error
        assert _whole_snipped_or_trimmed(result.content, kept.content)
    # The latest prompt survives, whole, at the end of a user message.
    latest = original[latest_prompt_index(original) or 0]
    prompt = [b for b in latest.content if not is_note(b)]
    assert any(m.role == "user" and _ends_with(m.content, prompt) for m in out)
    # So does the final message (the model has not answered or read it yet), but for the
    # middle of a result trimmed after an overflow.
    tail = out[-1].content[len(out[-1].content) - len(original[-1].content) :]
    assert len(tail) == len(original[-1].content)
    for new, old in zip(tail, original[-1].content, strict=True):
        if isinstance(new, ToolResultBlock) and isinstance(old, ToolResultBlock):
            assert new.tool_use_id == old.tool_use_id
            assert new.content == old.content or _trimmed(new.content, old.content)
        else:
            assert new == old
    assert out[-1].role == original[-1].role


def _trimmed(new: str, old: str) -> bool:
    """``new`` is ``old`` with its middle cut out and a note saying so."""
    head, found, rest = new.partition("\n[... ")
    tail = rest.partition(" ...]\n")[2]
    return bool(found) and old.startswith(head) and old.endswith(tail) and len(new) < len(old)


def _whole_snipped_or_trimmed(new: str, old: str) -> bool:
    return new == old or new.startswith(SNIP_MARK) or _trimmed(new, old)


@PROPERTY_SETTINGS
@given(conversations())
def test_generated_conversations_are_valid(messages: list[Message]) -> None:
    assert conversation_problems(messages) == []


@PROPERTY_SETTINGS
@given(conversations(), st.lists(transforms(), min_size=1, max_size=4))
def test_any_combination_of_stages_keeps_the_invariants(
    messages: list[Message], stages: list[Transform]
) -> None:
    before = [m.model_copy(deep=True) for m in messages]
    out = messages
    for stage in stages:
        out = stage(out)
        assert_invariants(messages, out)
    assert messages == before  # never mutated


@PROPERTY_SETTINGS
@given(conversations(), st.integers(min_value=0, max_value=6))
def test_snipping_changes_only_tool_result_content(messages: list[Message], keep: int) -> None:
    out = snip_tool_results(messages, keep)
    assert [m.role for m in out] == [m.role for m in messages]
    for old, new in zip(messages, out, strict=True):
        assert [b.type for b in old.content] == [b.type for b in new.content]
    whole = [r for m in out for r in m.tool_results if not r.content.startswith(SNIP_MARK)]
    assert len(whole) >= min(keep, len(_results(messages)))
    assert estimate(out) <= estimate(messages)


@PROPERTY_SETTINGS
@given(conversations(), st.integers(min_value=0, max_value=5_000))
def test_dropping_fits_the_target_or_drops_all_it_can(messages: list[Message], target: int) -> None:
    out = drop_oldest_turns(messages, target, estimate)
    points = cut_points(messages)
    if estimate(out) > target and estimate(messages) > target and points:
        assert len(out) == len(messages) - points[-1] + (
            0 if messages[points[-1]].role == "user" else 1
        )


def _always_summarise(request: ChatRequest) -> ChatResponse:
    return text(f"summary of {len(request.messages[0].text)} characters")


@PROPERTY_SETTINGS
@given(conversations(), st.integers(min_value=500, max_value=20_000))
def test_reactive_compaction_is_bounded_and_always_valid(
    messages: list[Message], window: int
) -> None:
    provider = ScriptedProvider([_always_summarise] * 3)
    compactor = Compactor(
        provider,
        ModelLimits(context_window=window, max_output_tokens=window // 4),
        CompactionSettings(keep_last_tool_results=2, max_summary_tokens=100),
    )
    current: list[Message] | None = messages
    rounds = 0
    while current is not None:
        assert_invariants(messages, current)
        current = asyncio.run(compactor.on_overflow(current))
        rounds += 1
    assert rounds <= len(REACTIVE_STAGES) + 1  # one retry per stage, then give up
