"""The plan told to the model again: once after a compaction, or when a resumed view lost it."""

from __future__ import annotations

from agent.engine.plan_note import PlanNote
from compaction.events import CompactionApplied
from compaction.stages import Stage
from providers import Message, ToolSpec, ToolUseBlock
from tools.todos import TodoItem, TodosChanged

ITEM = TodoItem(content="Fix", status="in_progress", activeForm="Fixing")
COMPACTED = CompactionApplied(
    stage=Stage.SUMMARISE,
    reason="manual",
    tokens_before=100,
    tokens_after=10,
    messages_before=8,
    messages_after=2,
)


def test_the_list_is_told_once_after_a_compaction_and_not_before() -> None:
    note = PlanNote()
    note.on_event(TodosChanged(todos=(ITEM,)))
    assert note.note() is None
    note.on_event(COMPACTED)
    told = note.note()
    assert told is not None
    assert '"activeForm": "Fixing"' in told
    assert note.note() is None


def test_no_plan_nothing_to_tell_and_a_new_list_makes_the_note_moot() -> None:
    note = PlanNote()
    note.on_event(COMPACTED)
    assert note.note() is None
    note.on_event(TodosChanged(todos=(ITEM,)))
    note.on_event(COMPACTED)
    note.on_event(TodosChanged(todos=(ITEM,)))  # the model wrote it again itself
    assert note.note() is None


def test_a_resumed_view_without_the_call_gets_the_list_with_the_first_request() -> None:
    call = ToolUseBlock(id="t1", name="todo_write", input={})
    kept = [Message.user("go"), Message(role="assistant", content=[call])]
    assert PlanNote((ITEM,), kept).note() is None
    assert PlanNote((ITEM,), [Message.user("SUMMARY")]).note() is not None


def test_it_follows_the_other_news_of_a_request() -> None:
    note = PlanNote((ITEM,), [])
    news = note.with_news(lambda offered: "server x is up")
    told = news([ToolSpec(name="a", description="", input_schema={})])
    assert told is not None
    assert told.startswith("server x is up\n\n[Your todo list")
    assert note.with_news(lambda offered: None)([]) is None
