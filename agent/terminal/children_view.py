"""Sub-agents at work, as the REPL shows them: one live line per running child above the
status line (its kind and job, what it runs now or the countdown of its request's retry or
wait, how long it has run, its tokens), which gives way to the child's summary line when it
ends (`agent.terminal.banners`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from agent.engine.outcome import (
    SubagentFinished,
    SubagentProgress,
    SubagentRecovery,
    SubagentStarted,
)
from agent.terminal.status_line import countdown_text, duration_text
from providers import Event
from recovery import RequestHeld, RetryScheduled

WIDTH = 60
"""Characters of a child's job and of its current tool shown on its line."""


@dataclass
class _Running:
    kind: str
    description: str
    started: float
    tool: str = "starting"
    tokens: int = 0
    waiting: RetryScheduled | RequestHeld | None = None
    """Its request waits to be sent (again) until the event's ``retry_at``."""


class ChildrenPanel:
    """The children running now, by their `task` call's id; a face's ``on_event`` keeps it.

    Args:
        clock: Monotonic seconds, for how long each has run.
        redact: Hides secrets in what the model wrote (a job, a command).
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        redact: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.clock = clock
        self.redact = redact
        self.running: dict[str, _Running] = {}

    def on_event(self, event: Event) -> None:
        if isinstance(event, SubagentStarted):
            self.running[event.tool_use_id] = _Running(
                event.agent_type, event.description, self.clock()
            )
        elif isinstance(event, SubagentProgress) and (child := self.running.get(event.tool_use_id)):
            child.tool, child.tokens = event.tool or "thinking", event.tokens
            child.waiting = None
        elif isinstance(event, SubagentRecovery) and (child := self.running.get(event.tool_use_id)):
            wait = event.recovery
            if isinstance(wait, RetryScheduled | RequestHeld):
                child.waiting = wait
        elif isinstance(event, SubagentFinished):
            self.running.pop(event.tool_use_id, None)

    def while_working(self) -> list[Text]:
        """One line per running child, in the order they started."""
        now = self.clock()
        lines = []
        for child in self.running.values():
            line = Text("  ⎿ ", style="dim")
            line.append(f"{child.kind}: ", style="bold")
            line.append(_cut(self.redact(child.description)))
            if child.waiting is not None:
                why = child.waiting.describe().split(" — ")[0]
                waits = f"{_cut(self.redact(why))}, {countdown_text(child.waiting, now)}"
                line.append(f" · {waits}", style="yellow")
            else:
                line.append(f" · {_cut(self.redact(child.tool))}", style="cyan")
            line.append(
                f" · {duration_text(now - child.started)} · {child.tokens:,} tokens", style="dim"
            )
            lines.append(line)
        return lines


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else f"{text[: WIDTH - 1]}…"
