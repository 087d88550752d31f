"""`analyse`: parse a command once with tree-sitter's bash grammar, cached per string.

The grammar loads on first use, so a session that runs no command (and ``agent --version``)
never pays for it.
"""

from __future__ import annotations

import contextlib
import gc
import re
import threading
import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import structlog

from tools.shell_reading.model import CommandAnalysis
from tools.shell_reading.walk import Reading

MAX_CHARS = 1024 * 1024
"""Longer text is not parsed at all: it is not knowable."""
PARSE_SECONDS = 1.0
"""The parser gives up after this long (its error recovery can be slow on garbled input)."""
MAX_SLOW_TOKENS = 2_000
"""More ``|`` or ``=(`` than this and the text is not parsed: the grammar's error recovery
is quadratic in them (50,000 pipes with a trailing one took two minutes)."""

LONG_SOURCE = 16 * 1024
"""From this many bytes on, the walk runs with the cyclic garbage collector paused: its
passes over the tens of thousands of (acyclic) objects a long script's walk makes cost a
sixth of the time."""

_log = structlog.get_logger(__name__)
_lock = threading.Lock()
_parser: Any = None


class _Unparsed(Exception):
    """The text is not given to the parser; the message says why."""


_BRACE_THEN_WIDE = re.compile(rb"(\{[0-9]*(?:\.\.[0-9]*)?)([\x80-\xff]+)")
"""A ``{`` (or ``{1..``), then a character that is not ASCII."""


def scanner_safe(source: bytes) -> bytes:
    """``source`` with the characters after ``{``, ``{12`` and ``{1..2`` that are not ASCII
    replaced by as many ``x`` bytes, so every node keeps its place in the text.

    The bash grammar's scanner reads them with C's ``isdigit``, whose table ends at 255: a
    larger code point (``{`` then U+E1481) reads far outside it, and the process died of a
    segmentation fault. Their values are read from the text, not from what was parsed."""
    if source.isascii() or b"{" not in source:
        return source
    return _BRACE_THEN_WIDE.sub(lambda m: m[1] + b"x" * len(m[2]), source)


def _parse(source: bytes) -> Any:
    pipes = source.count(b"|") - 2 * source.count(b"||")
    if pipes > MAX_SLOW_TOKENS or source.count(b"=(") > MAX_SLOW_TOKENS:
        raise _Unparsed(f"it has more than {MAX_SLOW_TOKENS:,} pipes or arrays")
    source = scanner_safe(source)
    global _parser
    with _lock:  # a tree-sitter parser is not safe to share between threads
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        started = time.monotonic()
        # A parse the progress callback stopped would otherwise resume, on the next call, over
        # that other text: each command starts from the beginning.
        _parser.reset()
        # The progress callback is only honoured when the text is read through a callback.
        try:
            return _parser.parse(
                lambda at, _point: source[at : at + 65536],
                progress_callback=lambda *_: time.monotonic() - started > PARSE_SECONDS,
            )
        except ValueError as stopped:  # how tree-sitter says the callback stopped it
            raise _Unparsed(
                f"the shell grammar could not read it within {PARSE_SECONDS:g} s"
            ) from stopped


@lru_cache(maxsize=256)
def analyse(command: str) -> CommandAnalysis:
    """What ``command`` runs, writes and reads, and what of it cannot be known beforehand.

    Never raises: input the grammar cannot read is reported in ``unknown``.
    """
    return read_at(command, 0)


def read_at(command: str, depth: int, *, shortcut: bool = True) -> CommandAnalysis:
    """`analyse` for a script nested ``depth`` shells deep (not cached).

    ``shortcut``: a tree read without error is walked by the fast loop (as always, but in
    tests that compare it with the whole walk: every node visited, every word read from the
    tree; `walk.Reading`)."""
    if len(command) > MAX_CHARS:
        reason = f"it is {len(command):,} characters long"
        return CommandAnalysis(command, unknown=(reason,), parsed=False)
    try:
        source = command.encode("utf-8", "surrogatepass")
        tree = _parse(source)
        nested = read_at if shortcut else _read_the_long_way
        reading = Reading(command, source, depth, nested, shortcut=shortcut)
        with _collector_paused(len(source) >= LONG_SOURCE):
            reading.walk(tree)
            found = reading.result()
            # The walk's own records go before the collector resumes, or its first pass
            # walks them too (that pass took 10 to 20 ms after a 100 kB script).
            del reading, tree
        return found
    except _Unparsed as error:
        reason = str(error)
    except ImportError as error:
        reason = f"the shell grammar is not installed ({error}); reinstall agent"
    except (RecursionError, MemoryError, UnicodeError, ValueError) as error:
        reason = f"it could not be read ({type(error).__name__})"
    _log.warning("command_unreadable", reason=reason, chars=len(command))
    return CommandAnalysis(command, unknown=(reason,), parsed=False)


def _read_the_long_way(command: str, depth: int) -> CommandAnalysis:
    return read_at(command, depth, shortcut=False)


@contextlib.contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    """The cyclic garbage collector off inside when ``pause`` (left as it was otherwise)."""
    enabled = pause and gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
