"""What one REPL turn changed, said in one line after it: "2 files changed, 1 command run".

A model can claim work no tool did; this line, counted from the engine's own events (the
checkpoints taken before each change, the tool calls that ran), lets the person see it.
"""

from __future__ import annotations

from pathlib import Path

from providers import Event, Message, StreamDelta, ToolResultBlock, ToolUseBlock
from tools import CheckpointRecorded, CommandChangedFiles, RolledBack

COMMAND_TOOL = "run_command"


class TurnChanges:
    """A `agent.engine.face.Face` that counts the files changed and commands run in a turn."""

    def __init__(self, workspace: Path) -> None:
        self._workspace = workspace
        self._changed: dict[str, None] = {}
        self.commands = 0
        self.tool_calls = 0

    def begin(self) -> None:
        """Start counting a new turn."""
        self._changed.clear()
        self.commands = 0
        self.tool_calls = 0

    @property
    def changed_files(self) -> list[str]:
        """Files changed in this turn and not put back, in the order they were first changed."""
        return list(self._changed)

    def summary(self) -> str:
        """The turn's changes in words: "1 file changed, 2 commands run", "no files changed"."""
        count = len(self._changed)
        files = "no files changed" if count == 0 else f"{_counted(count, 'file')} changed"
        if self.commands == 0:
            return files
        return f"{files}, {_counted(self.commands, 'command')} run"

    def on_event(self, event: Event) -> None:
        if isinstance(event, CheckpointRecorded):
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
        if call.name == COMMAND_TOOL:
            self.commands += 1


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
