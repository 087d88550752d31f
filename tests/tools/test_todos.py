"""todo_write: the plan the person sees, checked, announced as an event, found again on resume."""

from __future__ import annotations

from typing import Any

from tests.tools.conftest import Harness, MakeHarness
from tools.todos import RESULT, TodoItem, TodosChanged, current, last_todos


def item(content: str, status: str = "pending", active: str | None = None) -> dict[str, Any]:
    return {"content": content, "status": status, "activeForm": active or f"{content}ing"}


async def test_a_list_is_accepted_with_claude_codes_answer_and_announced(harness: Harness) -> None:
    todos = [item("Read the code", "completed"), item("Fix the bug", "in_progress"), item("Test")]
    result = await harness.run("todo_write", todos=todos)
    assert not result.is_error
    assert result.content == RESULT
    [event] = harness.of_type("todos_changed")
    assert isinstance(event, TodosChanged)
    assert [(t.content, t.status) for t in event.todos] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
        ("Test", "pending"),
    ]
    assert current(event.todos) == TodoItem.model_validate(item("Fix the bug", "in_progress"))


async def test_two_items_in_progress_are_refused_and_nothing_is_announced(
    harness: Harness,
) -> None:
    todos = [item("One", "in_progress"), item("Two", "in_progress")]
    result = await harness.run("todo_write", todos=todos)
    assert result.is_error
    assert "at most one item may be in_progress, and 2 are: 'One', 'Two'" in result.content
    assert "mark one in_progress" in result.content
    assert harness.of_type("todos_changed") == []


async def test_bad_items_get_a_tool_error_naming_the_field(harness: Harness) -> None:
    no_form = await harness.run("todo_write", todos=[{"content": "x", "status": "pending"}])
    assert no_form.is_error
    assert "activeForm" in no_form.content
    bad_status = await harness.run("todo_write", todos=[item("x", "done")])
    assert bad_status.is_error
    assert "status" in bad_status.content
    assert "in_progress" in bad_status.content
    empty = await harness.run("todo_write", todos=[item("", "pending", "Doing")])
    assert empty.is_error
    assert "content" in empty.content
    missing = await harness.run("todo_write")
    assert missing.is_error
    assert "todos" in missing.content
    assert harness.of_type("todos_changed") == []


async def test_an_empty_list_clears_the_plan(harness: Harness) -> None:
    result = await harness.run("todo_write", todos=[])
    assert not result.is_error
    [event] = harness.of_type("todos_changed")
    assert isinstance(event, TodosChanged)
    assert event.todos == ()


async def test_it_needs_no_approval_in_ask_mode(make_harness: MakeHarness) -> None:
    # No approver at all: a call that needed one would be refused.
    harness = make_harness(approval="ask", approver=None)
    result = await harness.run("todo_write", todos=[item("Plan", "in_progress")])
    assert not result.is_error, result.content


def test_the_last_saved_list_wins_and_a_damaged_one_is_passed_over() -> None:
    first = TodosChanged(todos=(TodoItem.model_validate(item("A")),)).model_dump(mode="json")
    second = TodosChanged(todos=(TodoItem.model_validate(item("B", "completed")),))
    damaged = {"type": "todos_changed", "todos": [{"content": "C", "status": "weird"}]}
    saved = [first, {"type": "notice", "text": "x"}, second.model_dump(mode="json"), damaged]
    assert [t.content for t in last_todos(saved)] == ["B"]
    assert last_todos([first, second]) == second.todos
    assert last_todos([]) == ()


def test_the_schema_has_the_item_inline_with_claude_codes_fields() -> None:
    from tools.todos import TodoWrite

    schema = TodoWrite().input_schema()
    assert "$defs" not in schema
    item = schema["properties"]["todos"]["items"]
    assert item["required"] == ["content", "status", "activeForm"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
