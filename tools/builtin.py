"""The built-in coding tools, in the order the model sees them."""

from __future__ import annotations

from typing import Any

from tools.base import Tool
from tools.files import EditFile, ReadFile, WriteFile
from tools.finding import ListFiles, Search
from tools.guard.sandbox import Sandbox
from tools.shell import RunCommand
from tools.todos import TodoWrite


def builtin_tools(sandbox: Sandbox | None = None) -> list[Tool[Any]]:
    """Fresh instances of read_file, write_file, edit_file, list_files, search, run_command,
    todo_write.

    ``sandbox`` confines run_command (default: ``workspace-write`` where the OS supports it).
    """
    return [
        ReadFile(),
        WriteFile(),
        EditFile(),
        ListFiles(),
        Search(),
        RunCommand(sandbox),
        TodoWrite(),
    ]
