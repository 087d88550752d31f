"""The system prompt: who the agent is, where it works, and the project's own instructions."""

from __future__ import annotations

import os
import platform
import stat
from pathlib import Path

PROJECT_INSTRUCTIONS = ("AGENTS.md", "CLAUDE.md")
"""Read in order, the first found only: CLAUDE.md serves a repository set up for Claude Code
that has no AGENTS.md."""
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
    """The system prompt for ``workspace``, with its AGENTS.md (else CLAUDE.md) appended."""
    prompt = BASE_PROMPT.format(workspace=workspace, platform=platform.system())
    found = instructions_file(workspace)
    if found is None:
        return prompt
    name, text = found
    if len(text) > MAX_INSTRUCTIONS_CHARS:
        text = text[:MAX_INSTRUCTIONS_CHARS] + "\n[... truncated ...]"
    return prompt + f"\nProject instructions from {name}:\n{text.strip()}\n"


def instructions_file(workspace: Path) -> tuple[str, str] | None:
    """The project's instructions file (AGENTS.md, else CLAUDE.md): its name and text."""
    for name in PROJECT_INSTRUCTIONS:
        text = read_instructions(workspace, name)
        if text is not None:
            return name, text
    return None


def read_instructions(workspace: Path, name: str = "AGENTS.md") -> str | None:
    """The text of ``workspace/name`` if it is a regular file inside the workspace.

    A symlink may point elsewhere in the workspace, never out of it: an ``AGENTS.md`` linked
    to a credentials file must not be sent to the model. Only the first
    `MAX_INSTRUCTIONS_CHARS` characters' worth of bytes are read.
    """
    try:
        root = workspace.resolve()
        path = (root / name).resolve()
        if root not in path.parents:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (OSError, RuntimeError):
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would block the start
                return None
            # Up to 4 bytes a character: enough bytes for the limit, then the cut marker.
            data = handle.read(MAX_INSTRUCTIONS_CHARS * 4 + 1)
        except OSError:
            return None
    return data.decode("utf-8", errors="replace")
