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
    UNAVAILABLE = 75
    """The provider cannot answer now (``EX_TEMPFAIL``): a long rate limit, an outage past
    the retry budget, no network. Try again later; the session is saved."""
    INTERRUPTED = 130
    """Ctrl-C (or SIGHUP); the session is saved."""
    TERMINATED = 143
    """SIGTERM; the session is saved."""
