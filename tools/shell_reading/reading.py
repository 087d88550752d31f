"""`analyse`: parse a command once with tree-sitter's bash grammar, cached per string.

The grammar loads on first use, so a session that runs no command (and ``agent --version``)
never pays for it.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import structlog

from tools.shell_reading.model import CommandAnalysis
from tools.shell_reading.walk import Reading

MAX_CHARS = 1024 * 1024
"""Longer text is not parsed at all: it is not knowable."""

_log = structlog.get_logger(__name__)
_lock = threading.Lock()
_parser: Any = None


def _parse(source: bytes) -> Any:
    global _parser
    with _lock:  # a tree-sitter parser is not safe to share between threads
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return _parser.parse(source)


@lru_cache(maxsize=256)
def analyse(command: str) -> CommandAnalysis:
    """What ``command`` runs, writes and reads, and what of it cannot be known beforehand.

    Never raises: input the grammar cannot read is reported in ``unknown``.
    """
    return read_at(command, 0)


def read_at(command: str, depth: int) -> CommandAnalysis:
    """`analyse` for a script nested ``depth`` shells deep (not cached)."""
    if len(command) > MAX_CHARS:
        return CommandAnalysis(command, unknown=(f"it is {len(command):,} characters long",))
    try:
        source = command.encode("utf-8", "surrogatepass")
        tree = _parse(source)
        reading = Reading(command, source, depth, read_at)
        reading.walk(tree.root_node)
        return reading.result()
    except ImportError as error:
        reason = f"the shell grammar is not installed ({error}); reinstall agent"
    except (RecursionError, MemoryError, ValueError, UnicodeError) as error:
        reason = f"it could not be read ({type(error).__name__})"
    _log.warning("command_unreadable", reason=reason)
    return CommandAnalysis(command, unknown=(reason,))
