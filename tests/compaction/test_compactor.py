from __future__ import annotations

from compaction import (
    CompactionApplied,
    CompactionDisabled,
    CompactionFailed,
    CompactionSettings,
    CompactionStarted,
    Compactor,
    Reason,
    Stage,
    conversation_problems,
)
from providers import ChatResponse, ErrorKind, Event, LlmError, Message, Purpose, Usage
from providers.models import ModelLimits
from providers.testing import ScriptedProvider, text
from tests.compaction.conversations import step

# usable = 4,000 - 1,000 reserved = 3,000 tokens; threshold 2,400; target 1,500.
LIMITS = ModelLimits(context_window=4_000, max_output_tokens=1_000)
SETTINGS = CompactionSettings(keep_last_tool_results=1, max_summary_tokens=200, breaker_failures=2)


def _make(provider: ScriptedProvider, **settings: object) -> tuple[Compactor, list[Event]]:
    events: list[Event] = []
    merged = SETTINGS.model_copy(update=settings)
    return Compactor(provider, LIMITS, merged, events=events.append), events


def tool_heavy() -> list[Message]:
    """~3,100 tokens, mostly in five old tool results."""
    messages: list[Message] = []
    for turn in range(5):
        messages += [Message.user(f"task {turn}"), *step([f"c{turn}"], result_size=2_400)]
        messages.append(Message.assistant(f"done {turn}"))
    return [*messages, Message.user("next task")]


def chat_heavy() -> list[Message]:
    """~3,000 tokens of plain conversation: nothing to snip."""
    messages: list[Message] = []
    for turn in range(6):
        messages += [
            Message.user(f"question {turn} " + "q" * 1_000),
            Message.assistant("a" * 1_000),
        ]
    return [*messages, Message.user("latest question")]


def _types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def test_should_compact_only_above_the_threshold() -> None:
    compactor, _ = _make(ScriptedProvider([]))
    assert compactor.should_compact(tool_heavy())
    assert not compactor.should_compact([Message.user("small")])
    off, _ = _make(ScriptedProvider([]), proactive=False)
    assert not off.should_compact(tool_heavy())


def test_the_threshold_uses_the_calibrated_count() -> None:
    compactor, _ = _make(ScriptedProvider([]))
    messages = [Message.user("short"), Message.assistant("short")]
    response = ChatResponse(
        message=messages[1], stop_reason="end_turn", usage=Usage(input_tokens=2_500)
    )
    compactor.observe(messages[:1], response)
    assert compactor.should_compact(messages)


async def test_proactive_stops_after_snipping_when_that_is_enough() -> None:
    provider = ScriptedProvider([])
    compactor, events = _make(provider)
    messages = tool_heavy()
    out = await compactor.before_request(messages)
    assert _types(events) == ["compaction_started", "compaction_applied"]
    applied = events[1]
    assert isinstance(applied, CompactionApplied)
    assert applied.stage is Stage.SNIP
    assert applied.reason is Reason.PROACTIVE
    assert applied.tokens_after < 1_500 < applied.tokens_before
    assert provider.requests == []
    assert out[-1] == messages[-1]
    assert conversation_problems(out) == []


async def test_proactive_summarises_when_snipping_is_not_enough() -> None:
    provider = ScriptedProvider([text("## Goals\nanswer the questions")])
    compactor, events = _make(provider)
    messages = chat_heavy()
    out = await compactor.before_request(messages)
    assert [e.stage for e in events if isinstance(e, CompactionApplied)] == [Stage.SUMMARISE]
    assert provider.requests[0].purpose is Purpose.BACKGROUND
    assert "answer the questions" in out[0].text
    assert out[-1].text == "latest question"
    assert compactor.tokens(out) <= compactor.budget.target
    assert compactor.failures == 0


async def test_a_failed_summary_falls_through_to_dropping() -> None:
    provider = ScriptedProvider([LlmError(ErrorKind.OVERLOADED, "busy")])
    compactor, events = _make(provider)
    out = await compactor.before_request(chat_heavy())
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert [e.stage for e in failed] == [Stage.SUMMARISE]
    assert "busy" in failed[0].error
    assert [e.stage for e in events if isinstance(e, CompactionApplied)] == [Stage.DROP]
    assert compactor.tokens(out) <= compactor.budget.target
    assert compactor.failures == 1


async def test_a_summary_larger_than_what_it_replaces_is_discarded_for_the_next_stage() -> None:
    provider = ScriptedProvider([text("## Goals\n" + "padding " * 2_000)])
    compactor, events = _make(provider)
    messages = chat_heavy()
    before = compactor.tokens(messages)

    out = await compactor.before_request(messages)

    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert [e.stage for e in failed] == [Stage.SUMMARISE]
    assert "not smaller" in failed[0].error
    applied = [e for e in events if isinstance(e, CompactionApplied)]
    assert [e.stage for e in applied] == [Stage.DROP]
    assert all(e.tokens_after < e.tokens_before for e in applied)
    assert "padding" not in str(out)
    assert compactor.tokens(out) < before


async def test_reactive_compaction_never_returns_a_larger_conversation() -> None:
    provider = ScriptedProvider([text("padding " * 4_000)])
    compactor, _ = _make(provider)
    messages = chat_heavy()
    out = await compactor.on_overflow(messages)  # nothing to snip; the summary grows it
    assert out is not None
    assert compactor.tokens(out) < compactor.tokens(messages)
    assert "padding" not in str(out)


async def test_a_stage_is_judged_against_an_estimate_of_what_it_replaced() -> None:
    # A server that reports far fewer tokens than our estimate: its figure for the whole
    # conversation must not make a snip look like growth.
    compactor, events = _make(ScriptedProvider([]))
    messages = tool_heavy()
    answer = ChatResponse(message=Message.assistant("ok"), stop_reason="end_turn")
    compactor.observe(messages, answer.model_copy(update={"usage": Usage(input_tokens=50)}))
    out = await compactor.on_overflow(messages)
    assert out is not None
    assert [e.stage for e in events if isinstance(e, CompactionApplied)] == [Stage.SNIP]


async def test_the_breaker_turns_proactive_compaction_off_and_manual_turns_it_on() -> None:
    busy = LlmError(ErrorKind.OVERLOADED, "busy")
    provider = ScriptedProvider([busy, busy])
    compactor, events = _make(provider)
    await compactor.before_request(chat_heavy())
    assert not compactor.disabled
    await compactor.before_request(chat_heavy())
    assert compactor.disabled
    assert isinstance(events[-1], CompactionDisabled)
    assert not compactor.should_compact(chat_heavy())
    assert await compactor.before_request(chat_heavy()) == chat_heavy()
    assert len(provider.requests) == 2  # no summary attempted while off

    provider.add(text("summary"))
    result = await compactor.compact(chat_heavy())
    assert result.changed
    assert not compactor.disabled


async def test_a_success_resets_the_failure_count() -> None:
    provider = ScriptedProvider([LlmError(ErrorKind.OVERLOADED, "busy"), text("summary")])
    compactor, _ = _make(provider)
    await compactor.before_request(chat_heavy())
    await compactor.before_request(chat_heavy())
    assert compactor.failures == 0


async def test_reactive_runs_one_stage_per_overflow_then_gives_up() -> None:
    provider = ScriptedProvider([text("summary of the work")])
    compactor, events = _make(provider)
    messages = tool_heavy()
    first = await compactor.on_overflow(messages)
    assert first is not None
    second = await compactor.on_overflow(first)
    assert second is not None
    third = await compactor.on_overflow(second)
    assert third is not None
    assert await compactor.on_overflow(third) is None  # trim: no unread results to shorten
    said = len(events)
    assert await compactor.on_overflow(third) is None
    # Out of stages, the compactor says nothing: the turn says why it cannot go on (a prompt
    # too long for the model is not a compaction failure).
    assert len(events) == said
    applied = [e for e in events if isinstance(e, CompactionApplied)]
    assert [e.stage for e in applied] == [Stage.SNIP, Stage.SUMMARISE, Stage.DROP]
    assert all(e.reason is Reason.REACTIVE for e in applied)
    for out in (first, second, third):
        assert conversation_problems(out) == []
        assert out[-1].content[-1] == messages[-1].content[-1]  # the latest prompt survives


async def test_reactive_passes_over_stages_with_nothing_to_do() -> None:
    provider = ScriptedProvider([text("summary")])
    compactor, events = _make(provider)
    out = await compactor.on_overflow(chat_heavy())  # nothing to snip
    assert out is not None
    assert [e.stage for e in events if isinstance(e, CompactionApplied)] == [Stage.SUMMARISE]
    assert _types(events).count("compaction_started") == 1


async def test_a_successful_response_starts_the_ladder_again() -> None:
    compactor, events = _make(ScriptedProvider([]))
    out = await compactor.on_overflow(tool_heavy())
    assert out is not None
    compactor.observe(out, ChatResponse(message=Message.assistant("ok"), stop_reason="end_turn"))
    assert await compactor.on_overflow(tool_heavy()) is not None
    assert [e.stage for e in events if isinstance(e, CompactionApplied)] == [Stage.SNIP] * 2


async def test_manual_compaction_summarises_with_the_persons_focus() -> None:
    provider = ScriptedProvider([text("the summary")])
    compactor, events = _make(provider)
    messages = [*chat_heavy(), Message.assistant("last answer")]
    result = await compactor.compact(messages, focus="the database schema")
    assert "the database schema" in provider.requests[0].messages[0].text
    assert result.reason is Reason.MANUAL
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.messages[0].text.endswith("latest question")
    assert result.messages[1].text == "last answer"
    assert isinstance(events[0], CompactionStarted)


async def test_manual_compaction_of_a_single_message_has_nothing_to_do() -> None:
    compactor, events = _make(ScriptedProvider([]))
    result = await compactor.compact([Message.user("hi")])
    assert not result.changed
    assert isinstance(events[-1], CompactionFailed)
    assert "nothing to compact" in events[-1].describe()


async def test_the_input_is_never_mutated() -> None:
    compactor, _ = _make(ScriptedProvider([text("summary")]))
    messages = tool_heavy()
    before = [m.model_copy(deep=True) for m in messages]
    for _ in range(4):
        await compactor.on_overflow(messages)
    assert messages == before


def test_events_describe_themselves_for_the_person() -> None:
    applied = CompactionApplied(
        stage=Stage.SNIP,
        reason=Reason.PROACTIVE,
        tokens_before=120_000,
        tokens_after=40_000,
        messages_before=80,
        messages_after=80,
    )
    assert applied.describe() == "Compacted: snipped old tool results, ~120,000 → ~40,000 tokens"
    assert applied.model_dump(mode="json")["type"] == "compaction_applied"
    assert "/compact" in CompactionDisabled(failures=3).describe()


def test_limits_given_as_a_function_are_read_each_time() -> None:
    current = [LIMITS]  # the current model's, as the agent passes them
    compactor = Compactor(ScriptedProvider([]), lambda: current[0], SETTINGS)
    assert compactor.limits == LIMITS
    messages = tool_heavy()
    assert compactor.should_compact(messages)

    current[0] = ModelLimits(context_window=200_000, max_output_tokens=8_000)  # a fallback
    assert compactor.limits == current[0]
    assert not compactor.should_compact(messages)


async def test_manual_compaction_that_would_grow_keeps_the_conversation_and_says_so() -> None:
    messages = [Message.user("hi " * 40), Message.assistant("ok"), Message.user("and now?")]
    compactor, events = _make(ScriptedProvider([text("a long summary " * 200)]))

    result = await compactor.compact(messages)

    assert not result.changed
    assert result.messages == messages
    failed = [e for e in events if isinstance(e, CompactionFailed)]
    assert len(failed) == 1
    assert "was not smaller" in failed[0].describe()
    assert "kept as it was" in failed[0].describe()
    assert not [e for e in events if isinstance(e, CompactionApplied)]


async def test_a_compaction_is_never_reported_as_growth_on_the_providers_scale() -> None:
    # The provider counts far fewer tokens than our estimate; the compacted view can only be
    # estimated. "~833 -> ~947 tokens" was seen: the figures must be on one scale.
    messages = chat_heavy()
    compactor, events = _make(ScriptedProvider([text("summary")]))
    answer = ChatResponse(message=Message.assistant("ok"), stop_reason="end_turn")
    compactor.observe(messages, answer.model_copy(update={"usage": Usage(input_tokens=400)}))

    result = await compactor.compact(messages)

    assert result.changed
    applied = [e for e in events if isinstance(e, CompactionApplied)]
    assert applied
    assert all(e.tokens_after < e.tokens_before for e in applied)
    assert result.tokens_after < result.tokens_before


def huge_unread_result() -> list[Message]:
    """A prompt, one call and its result, unread and alone ~25,000 tokens: nothing to cut."""
    return [Message.user("read the log"), *step(["c0"], result_size=100_000)]


async def test_an_overflow_from_a_huge_unread_result_shortens_that_result() -> None:
    compactor, events = _make(ScriptedProvider([]))
    messages = huge_unread_result()
    out = await compactor.on_overflow(messages)
    assert out is not None
    assert conversation_problems(out) == []
    assert compactor.tokens(out) <= compactor.tokens(messages) // 2
    result = out[-1].tool_results[0]
    assert result.tool_use_id == "c0"
    assert result.content.startswith("c0:xxx")  # its head and tail stay, the middle goes
    assert "characters cut to fit the context window" in result.content
    applied = [e.stage for e in events if isinstance(e, CompactionApplied)]
    assert applied == [Stage.TRIM]
    assert await compactor.on_overflow(out) is None  # out of stages: the turn says why
