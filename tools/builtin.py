"""The built-in coding tools, in the order the model sees them."""

from __future__ import annotations

from typing import Any

from tools.background import BackgroundShells
from tools.background_tools import CommandOutput, KillCommand
from tools.base import Tool
from tools.files import EditFile, ReadFile, WriteFile
from tools.finding import ListFiles, Search
from tools.guard.sandbox import Sandbox
from tools.shell import RunCommand
from tools.todos import TodoWrite


def builtin_tools(
    sandbox: Sandbox | None = None, shells: BackgroundShells | None = None
) -> list[Tool[Any]]:
    """Fresh instances of read_file, write_file, edit_file, list_files, search, run_command,
    command_output, kill_command and todo_write.

    ``sandbox`` confines run_command (default: ``workspace-write`` where the OS supports it);
    ``shells`` holds its background commands (default: a new, empty set).
    """
    shells = shells if shells is not None else BackgroundShells()
    return [
        *(ReadFile(), WriteFile(), EditFile(), ListFiles(), Search()),
        *(RunCommand(sandbox, shells), CommandOutput(shells), KillCommand(shells)),
        TodoWrite(),
    ]
