"""The plan as the REPL draws it: ticked, highlighted by activeForm, windowed, above the prompt."""

from __future__ import annotations

import io

from prompt_toolkit.formatted_text import FormattedText, to_plain_text
from rich.console import Console

from agent.terminal.todo_view import NO_PLAN, TodoPanel
from tools.todos import TodoItem, TodosChanged


def todo(content: str, status: str = "pending") -> TodoItem:
    return TodoItem(content=content, status=status, activeForm=f"{content}ing")  # type: ignore[arg-type]


def rendered(panel: TodoPanel) -> str:
    console = Console(file=io.StringIO(), width=120, no_color=True)
    console.print(panel.listing())
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def test_done_items_are_ticked_and_the_current_one_reads_as_under_way() -> None:
    panel = TodoPanel()
    panel.on_event(TodosChanged(todos=(todo("Read", "completed"), todo("Fix", "in_progress"))))
    lines = [line.plain for line in panel.while_working()]
    assert lines == ["  ☒ Read", "  ▸ Fixing"]
    assert "Plan · 1/2 done" in rendered(panel)


def test_a_finished_plan_leaves_the_prompt_but_not_todos() -> None:
    panel = TodoPanel()
    panel.on_event(TodosChanged(todos=(todo("Read", "completed"),)))
    assert panel.while_working() == []
    assert panel.above("› ") == "› "
    assert "☒ Read" in rendered(panel)


def test_no_plan_says_how_one_comes() -> None:
    assert NO_PLAN in rendered(TodoPanel())


def test_above_the_prompt_the_plan_precedes_it_and_control_characters_are_shown() -> None:
    panel = TodoPanel()
    panel.on_event(TodosChanged(todos=(todo("Say \x1b[2J hi", "in_progress"), todo("Then"))))
    above = panel.above("› ")
    assert isinstance(above, FormattedText)
    text = to_plain_text(above)
    assert "\x1b" not in text
    assert text.endswith("  ☐ Then\n› ")


def test_a_long_plan_is_windowed_around_the_work_under_way() -> None:
    items = [todo(f"Step {n}", "completed") for n in range(10)]
    items += [todo("Step 10", "in_progress"), *(todo(f"Step {n}") for n in range(11, 20))]
    panel = TodoPanel()
    panel.on_event(TodosChanged(todos=tuple(items)))
    lines = [line.plain for line in panel.while_working()]
    assert len(lines) <= 9
    assert lines[0] == "  … 9 done above"
    assert "  ▸ Step 10ing" in lines
    assert lines[-1].startswith("  … ")
    assert lines[-1].endswith(" more")
    assert "Step 19" in rendered(panel)  # /todos shows every item


def test_restore_reads_the_saved_events_of_a_session() -> None:
    panel = TodoPanel()
    saved = TodosChanged(todos=(todo("Resumed", "in_progress"),)).model_dump(mode="json")
    panel.restore([{"type": "notice", "text": "x"}, saved])
    assert [line.plain for line in panel.while_working()] == ["  ▸ Resumeding"]
    panel.restore([])
    assert panel.todos == ()


def test_secrets_in_the_plan_are_hidden() -> None:
    panel = TodoPanel(redact=lambda text: text.replace("sk-secret", "****"))
    panel.on_event(TodosChanged(todos=(todo("Use key sk-secret", "in_progress"),)))
    assert "sk-secret" not in rendered(panel)
    assert "****" in to_plain_text(panel.above("› "))
