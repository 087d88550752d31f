"""Rendering of streamed output, tool calls and events to a terminal (rich)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.markup import escape

from agent.llm import Event, StreamDelta, StreamReset, TextDelta, ToolResultBlock, ToolUseBlock

QUIET_EVENTS = frozenset({"turn_ended"})


class ConsoleUI:
    """Shows a turn as it happens: answer text on ``out``, activity on ``err``.

    Under ``-p`` the answer goes to stdout and activity to stderr, so the answer can be piped.
    In the REPL both are the same console.
    """

    def __init__(self, out: Console, err: Console | None = None, *, stream: bool = True) -> None:
        self.out = out
        self.err = err or out
        self.stream = stream
        self._open_line = False

    def on_delta(self, delta: StreamDelta) -> None:
        """Print streamed answer text; note a restarted stream."""
        if isinstance(delta, TextDelta) and self.stream:
            self.out.print(delta.text, end="", markup=False, highlight=False, soft_wrap=True)
            self._open_line = not delta.text.endswith("\n")
        elif isinstance(delta, StreamReset):
            self._end_line()
            self.err.print(f"[dim]↻ stream restarted ({escape(delta.reason)})[/dim]")

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """One compact line per tool call with its outcome."""
        self._end_line()
        args = _short_args(call.input)
        first = result.content.strip().splitlines()[0] if result.content.strip() else ""
        if result.is_error:
            self.err.print(
                f"[red]✗ {call.name}[/red]({escape(args)}) [red]{escape(first[:120])}[/red]"
            )
        else:
            self.err.print(
                f"[green]✓ {call.name}[/green]({escape(args)}) [dim]{escape(first[:80])}[/dim]"
            )

    def on_event(self, event: Event) -> None:
        """A one-line banner for recovery, compaction and tool events."""
        if event.type in QUIET_EVENTS:
            return
        self._end_line()
        self.err.print(f"[yellow]• {escape(event.describe())}[/yellow]")

    def finish(self) -> None:
        """End the streamed answer with a newline."""
        self._end_line()

    def _end_line(self) -> None:
        if self._open_line:
            self.out.print()
            self._open_line = False


def _short_args(arguments: dict[str, object], limit: int = 80) -> str:
    parts = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        text = text.replace("\n", "⏎")
        if len(text) > 40:
            text = text[:37] + "…"
        parts.append(f"{key}={text}")
    joined = ", ".join(parts)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"
