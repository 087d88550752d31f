"""What one REPL turn changed, said in one line after it: "2 files changed, 1 command run".

A model can claim work no tool did; this line, counted from the engine's own events (the
checkpoints taken before each change, the calls that passed every check and started, the
calls refused), lets the person see it. A refused command did not run and is not counted
as run: "no files changed, 2 calls refused".
"""

from __future__ import annotations

from pathlib import Path

from providers import Event, Message, StreamDelta, ToolResultBlock, ToolUseBlock
from tools import CheckpointRecorded, CommandChangedFiles, RolledBack, ToolRefused, ToolStarted

COMMAND_TOOL = "run_command"


class TurnChanges:
    """A `agent.engine.face.Face` that counts the files changed, the commands run and the
    calls refused in a turn."""

    def __init__(self, workspace: Path) -> None:
        self._workspace = workspace
        self._changed: dict[str, None] = {}
        self.commands = 0
        self.refused = 0
        self.tool_calls = 0

    def begin(self) -> None:
        """Start counting a new turn."""
        self._changed.clear()
        self.commands = 0
        self.refused = 0
        self.tool_calls = 0

    @property
    def changed_files(self) -> list[str]:
        """Files changed in this turn and not put back, in the order they were first changed."""
        return list(self._changed)

    def summary(self) -> str:
        """The turn's changes in words: "1 file changed, 2 commands run", "no files changed",
        "no files changed, 1 call refused"."""
        count = len(self._changed)
        parts = ["no files changed" if count == 0 else f"{_counted(count, 'file')} changed"]
        if self.commands:
            parts.append(f"{_counted(self.commands, 'command')} run")
        if self.refused:
            parts.append(f"{_counted(self.refused, 'call')} refused")
        return ", ".join(parts)

    def on_event(self, event: Event) -> None:
        if isinstance(event, ToolStarted) and event.tool == COMMAND_TOOL:
            self.commands += 1  # passed every check: it runs (a refused one never starts)
        elif isinstance(event, ToolRefused):
            self.refused += 1
        elif isinstance(event, CheckpointRecorded):
            self._changed[self._relative(event.path)] = None
        elif isinstance(event, CommandChangedFiles):
            self._changed.update(dict.fromkeys(map(self._relative, event.paths)))
        elif isinstance(event, RolledBack):
            for path in event.restored:
                self._changed.pop(self._relative(path), None)

    def _relative(self, path: str) -> str:
        """One name per file, whichever form an event gives (absolute or relative)."""
        try:
            return str((self._workspace / path).relative_to(self._workspace))
        except ValueError:
            return path

    def on_delta(self, delta: StreamDelta) -> None:
        pass

    def on_message(self, message: Message) -> None:
        pass

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self.tool_calls += 1


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
