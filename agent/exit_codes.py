"""The exit codes of every ``agent`` command, defined once."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """How an ``agent`` process ended."""

    OK = 0
    """Done."""
    FAILED = 1
    """The turn failed after recovery; the session is saved."""
    USAGE = 2
    """Bad command line or configuration; nothing ran."""
    INTERRUPTED = 130
    """Ctrl-C or a termination signal; the session is saved."""
