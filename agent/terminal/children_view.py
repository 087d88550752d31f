"""Sub-agents at work, as the REPL shows them: one live line per running child above the
status line (its kind and job, what it runs now, how long it has run, its tokens), which
gives way to the child's summary line when it ends (`agent.terminal.banners`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from agent.engine.outcome import SubagentFinished, SubagentProgress, SubagentStarted
from agent.terminal.status_line import duration_text
from providers import Event

WIDTH = 60
"""Characters of a child's job and of its current tool shown on its line."""


@dataclass
class _Running:
    kind: str
    description: str
    started: float
    tool: str = "starting"
    tokens: int = 0


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
            line.append(f" · {_cut(self.redact(child.tool))}", style="cyan")
            line.append(
                f" · {duration_text(now - child.started)} · {child.tokens:,} tokens", style="dim"
            )
            lines.append(line)
        return lines


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else f"{text[: WIDTH - 1]}…"
