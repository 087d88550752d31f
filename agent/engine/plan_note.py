"""The model's todo list, told to it again when compaction has taken away the calls that wrote
it (or a resumed session's view no longer holds them): the person still sees the plan, so the
model must know it too, or it would start a new one."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from compaction.events import CompactionApplied
from providers import Event, Message, ToolSpec
from tools.todos import TodoItem, TodosChanged

ToolNews = Callable[[Sequence[ToolSpec]], str | None]


class PlanNote:
    """Holds the current list; `note` gives it once after a compaction.

    Args:
        todos: The list the session starts with (a resumed one's).
        view: The conversation the model sees first; when no ``todo_write`` call is in it,
            the list is told with the first request.
    """

    def __init__(self, todos: Sequence[TodoItem] = (), view: Sequence[Message] = ()) -> None:
        self.todos = tuple(todos)
        written = any(use.name == "todo_write" for m in view for use in m.tool_uses)
        self._due = bool(self.todos) and not written

    def on_event(self, event: Event) -> None:
        if isinstance(event, TodosChanged):
            self.todos, self._due = event.todos, False
        elif isinstance(event, CompactionApplied):
            self._due = bool(self.todos)

    def note(self) -> str | None:
        """The list for the model, once after it was lost from view; else None."""
        if not self._due:
            return None
        self._due = False
        items = [item.model_dump() for item in self.todos]
        return (
            "[Your todo list, kept through the compaction of this conversation (keep it "
            f"current with todo_write): {json.dumps(items, ensure_ascii=False)}]"
        )

    def with_news(self, news: ToolNews) -> ToolNews:
        """``news`` with this note after it: one note for the next request."""

        def both(offered: Sequence[ToolSpec]) -> str | None:
            parts = [part for part in (news(offered), self.note()) if part]
            return "\n\n".join(parts) or None

        return both
