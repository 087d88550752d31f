"""The system prompt: who the agent is, where it works, and the project's own instructions."""

from __future__ import annotations

import platform
from pathlib import Path

PROJECT_INSTRUCTIONS = ("AGENTS.md",)
MAX_INSTRUCTIONS_CHARS = 20_000

BASE_PROMPT = """\
You are agent, a coding assistant working in the user's repository through tools.

Workspace: {workspace}
Platform: {platform}

How to work:
- Read before you edit: use list_files, search and read_file to find and understand code.
- Edit with edit_file (exact, unique replacements) or write_file for new files.
- Verify with run_command (tests, linters, builds) before saying you are done.
- Work in small steps. If a tool fails, read its message: it says what went wrong and what to try.
- Paths are relative to the workspace; you cannot touch files outside it.
- When the task is done, answer briefly: what you changed and how you checked it.
"""


def build_system_prompt(workspace: Path) -> str:
    """The system prompt for ``workspace``, with its AGENTS.md appended when there is one."""
    prompt = BASE_PROMPT.format(workspace=workspace, platform=platform.system())
    for name in PROJECT_INSTRUCTIONS:
        path = workspace / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = text[:MAX_INSTRUCTIONS_CHARS] + "\n[... truncated ...]"
        prompt += f"\nProject instructions from {name}:\n{text.strip()}\n"
    return prompt
