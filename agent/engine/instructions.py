"""AGENTS.md files in the subdirectories the model works in (nearest wins), as Codex reads
them.

The workspace's own AGENTS.md (else CLAUDE.md) is in the system prompt. A subdirectory may
have one of its own: the first time a tool call names a path under it, the nearest such file
between that path and the workspace root goes to the model with the call's result, once per
file, as a bracketed note after the output.
"""

from __future__ import annotations

from pathlib import Path

from agent.engine.system_prompt import (
    MAX_INSTRUCTIONS_CHARS,
    PROJECT_INSTRUCTIONS,
    read_instructions,
)
from providers import ToolResultBlock, ToolUseBlock
from tools.workspace import PathOutsideWorkspace, resolve_in_workspace


class NearestInstructions:
    """Adds a subdirectory's instructions to the first result that works there."""

    def __init__(self, workspace: Path) -> None:
        self._root = workspace.resolve()
        self._given: set[str] = set()

    def annotate(self, call: ToolUseBlock, result: ToolResultBlock) -> ToolResultBlock:
        """``result``, with the instructions of the nearest subdirectory that has them, the
        first time a call works under it."""
        raw = call.input.get("path")
        if not isinstance(raw, str) or not raw or "\0" in raw:
            return result
        try:
            target = resolve_in_workspace(self._root, raw)
            directory = target if target.is_dir() else target.parent
        except (PathOutsideWorkspace, OSError, ValueError):
            return result
        found = self._nearest(directory)
        if found is None or found[0] in self._given:
            return result
        name, text = found
        self._given.add(name)
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = text[:MAX_INSTRUCTIONS_CHARS] + "\n[... truncated ...]"
        where = str(Path(name).parent)
        note = f"\n\n[Instructions for {where}/ from {name}; they apply to files there:]\n"
        return result.model_copy(update={"content": result.content + note + text.strip()})

    def _nearest(self, directory: Path) -> tuple[str, str] | None:
        """The instructions file nearest to ``directory``, below the workspace root."""
        while directory != self._root and self._root in directory.parents:
            for file_name in PROJECT_INSTRUCTIONS:
                name = str((directory / file_name).relative_to(self._root))
                text = read_instructions(self._root, name)
                if text is not None:
                    return name, text
            directory = directory.parent
        return None
