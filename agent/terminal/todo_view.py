"""The model's plan as the REPL shows it: above the status line during a turn, above the prompt
between turns while anything is left to do, and whole on ``/todos``.

Done items are ticked, the one under way is highlighted by its ``activeForm`` ("Running the
tests"), the rest wait with an empty box. The list is the last `tools.todos.TodosChanged`: heard
as it happens, or read back from a resumed session's saved events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prompt_toolkit.formatted_text import FormattedText
from rich.console import Group, RenderableType
from rich.text import Text

from agent.terminal.console import visible
from providers import Event
from tools.todos import TodoItem, TodosChanged, last_todos

MAX_SHOWN = 8
"""Items shown above the prompt and the status line; /todos shows every one."""
NO_PLAN = "No plan yet: for work of several steps the model keeps one with todo_write."


class TodoPanel:
    """The current todo list and its views; a face's ``on_event`` keeps it current."""

    def __init__(self, redact: Callable[[str], str] = lambda text: text) -> None:
        self.todos: tuple[TodoItem, ...] = ()
        self.redact = redact
        """Hides secrets in what the model wrote, as in every other line it is shown."""

    def on_event(self, event: Event) -> None:
        """Take the list a `TodosChanged` carries."""
        if isinstance(event, TodosChanged):
            self.todos = event.todos

    def restore(self, saved: Iterable[Mapping[str, Any] | Event]) -> None:
        """The list a session's saved events leave (none for a new session)."""
        self.todos = last_todos(saved)

    @property
    def open(self) -> bool:
        """Whether anything is left to do (a finished plan is no longer shown unasked)."""
        return any(item.status != "completed" for item in self.todos)

    def lines(self, limit: int | None = MAX_SHOWN) -> list[Text]:
        """One styled line per item, at most ``limit`` around the item under way."""
        items = list(self.todos)
        start, shown = 0, items
        if limit is not None and len(items) > limit:
            under_way = next((i for i, t in enumerate(items) if t.status != "completed"), 0)
            start = max(0, min(under_way - 1, len(items) - limit + 1))
            shown = items[start : start + limit - 1]
        lines = [_line(item, self.redact) for item in shown]
        if start:
            lines.insert(0, Text(f"  … {start} done above", style="dim"))
        if (after := len(items) - start - len(shown)) > 0:
            lines.append(Text(f"  … {after} more", style="dim"))
        return lines

    def while_working(self) -> list[Text]:
        """The lines above the status line: the plan while it is open, else none."""
        return self.lines() if self.open else []

    def listing(self) -> RenderableType:
        """``/todos``: every item, with how many are done."""
        if not self.todos:
            return Text(NO_PLAN, style="dim")
        done = sum(item.status == "completed" for item in self.todos)
        head = Text(f"Plan · {done}/{len(self.todos)} done", style="bold")
        return Group(head, *self.lines(limit=None))

    def above(self, prompt: str) -> str | FormattedText:
        """The prompt with the open plan above it (prompt-toolkit's formatted text)."""
        if not self.open:
            return prompt
        fragments: list[tuple[str, str]] = []
        for line in self.lines():
            fragments += [
                (_TOOLKIT_STYLES.get(str(line.style), ""), visible(line.plain)),
                ("", "\n"),
            ]
        return FormattedText([*fragments, ("", prompt)])


_MARKS = {"completed": ("☒ ", "dim strike"), "in_progress": ("▸ ", "bold cyan")}
_TOOLKIT_STYLES = {"dim strike": "fg:ansibrightblack strike", "bold cyan": "bold fg:ansicyan"}


def _line(item: TodoItem, redact: Callable[[str], str]) -> Text:
    mark, style = _MARKS.get(item.status, ("☐ ", ""))
    text = redact(item.activeForm if item.status == "in_progress" else item.content)
    return Text(f"  {mark}{_one_line(text)}", style=style, no_wrap=True, overflow="ellipsis")


def _one_line(text: str) -> str:
    return " ".join(text.split())
