"""The visible plan: `todo_write` (Claude Code's ``TodoWrite``) replaces the session's todo list.

The tool changes nothing on disk, so it needs no approval and runs in plan mode. Each accepted
list is a `TodosChanged` event: the faces show it (the REPL above the prompt, ACP as a
``plan`` update) and the session log keeps it, so `last_todos` finds the current list again
on resume, whatever compaction did to the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from providers.events import Event
from tools.base import Tool, ToolContext, ToolError, ToolOutput

TodoStatus = Literal["pending", "in_progress", "completed"]
MAX_TODOS = 100
MAX_TEXT = 500

RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)


class TodoItem(BaseModel):
    """One step of the plan."""

    model_config = ConfigDict(frozen=True)

    content: str = Field(
        min_length=1, max_length=MAX_TEXT, description="The step, imperative: 'Run the tests'."
    )
    status: TodoStatus
    activeForm: str = Field(  # Claude Code's field name
        min_length=1,
        max_length=MAX_TEXT,
        description="The step while it is under way, present continuous: 'Running the tests'.",
    )


class TodoWriteInput(BaseModel):
    todos: list[TodoItem] = Field(
        max_length=MAX_TODOS, description="The whole updated todo list (it replaces the old one)."
    )


class TodosChanged(Event):
    """The session's todo list now reads ``todos`` (an empty list: no plan)."""

    type: Literal["todos_changed"] = "todos_changed"
    todos: tuple[TodoItem, ...]

    def describe(self) -> str:
        done = sum(item.status == "completed" for item in self.todos)
        return f"plan: {done}/{len(self.todos)} done"


class TodoWrite(Tool[TodoWriteInput]):
    name = "todo_write"
    description = (
        "Create and update a structured todo list for the current task; the person sees it "
        "move. Use it for work of three or more steps or when the person gives a list of "
        "things to do; skip it for a single simple step. Each call sends the whole list. "
        "Each item has content (imperative: 'Run the tests'), activeForm (present "
        "continuous: 'Running the tests') and status: pending, in_progress or completed. "
        "Keep exactly one item in_progress while you work, mark an item completed as soon "
        "as it is done (never when tests fail or the work is partial), and add items you "
        "discover along the way."
    )
    input_model = TodoWriteInput
    idempotent = True

    def input_schema(self) -> dict[str, Any]:
        """The schema with the item inline: some OpenAI-compatible servers and small models'
        templates do not follow a ``$ref``."""
        schema = super().input_schema()
        schema["properties"]["todos"]["items"] = schema.pop("$defs")["TodoItem"]
        return schema

    def summary(self, args: TodoWriteInput) -> str:
        done = sum(item.status == "completed" for item in args.todos)
        return f"todo_write {done}/{len(args.todos)} done"

    async def run(self, args: TodoWriteInput, ctx: ToolContext) -> ToolOutput:
        busy = [item.content for item in args.todos if item.status == "in_progress"]
        if len(busy) > 1:
            raise ToolError(
                f"at most one item may be in_progress, and {len(busy)} are: "
                f"{', '.join(map(repr, busy))}",
                hint="mark one in_progress and the others pending or completed, then call "
                "todo_write again with the whole list",
            )
        ctx.emit(TodosChanged(todos=tuple(args.todos)))
        return ToolOutput(RESULT)


def last_todos(events: Iterable[Mapping[str, Any] | Event]) -> tuple[TodoItem, ...]:
    """The todo list the last `TodosChanged` in ``events`` left (saved dicts or events);
    a saved event that does not read as one is passed over."""
    found: tuple[TodoItem, ...] = ()
    for event in events:
        if isinstance(event, TodosChanged):
            found = event.todos
        elif isinstance(event, Mapping) and event.get("type") == "todos_changed":
            try:
                found = TodosChanged.model_validate(event).todos
            except ValidationError:
                continue
    return found


def current(todos: Sequence[TodoItem]) -> TodoItem | None:
    """The item under way, if any."""
    return next((item for item in todos if item.status == "in_progress"), None)
