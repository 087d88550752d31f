"""Tab completion of ``@path`` mentions from the workspace's files, ``.gitignore`` respected."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from tools.ignore import GitIgnore

_FRAGMENT = re.compile(r"(?:^|\s)@((?:\\ |[^\s@])*)$")
MAX_PATHS = 20_000
"""Paths kept for completion; a bigger tree is completed from its first ones."""
MAX_SHOWN = 50
FRESH_FOR = 10.0
"""Seconds a scan of the workspace is reused: a scan per key would lag in a big tree."""


class MentionCompleter(Completer):
    """Completes the ``@`` fragment before the cursor with workspace paths (dirs end in ``/``).

    Paths that start with the fragment come first, then those whose name does, then those
    that contain it.

    Args:
        workspace: The project root.
        clock: Seconds, monotonic (injected by tests).
    """

    def __init__(self, workspace: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.workspace = workspace
        self._clock = clock
        self._paths: list[str] = []
        self._scanned = float("-inf")

    def paths(self) -> list[str]:
        """The workspace's paths, relative, from a scan at most `FRESH_FOR` seconds old."""
        if self._clock() - self._scanned > FRESH_FOR:
            self._paths = scan(self.workspace)
            self._scanned = self._clock()
        return self._paths

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        found = _FRAGMENT.search(document.text_before_cursor)
        if found is None:
            return
        typed = found.group(1)
        fragment = typed.replace("\\ ", " ")
        for path in ranked(self.paths(), fragment)[:MAX_SHOWN]:
            yield Completion(path.replace(" ", "\\ "), start_position=-len(typed), display=path)


def ranked(paths: list[str], fragment: str) -> list[str]:
    """``paths`` matching ``fragment``: by prefix, then by name prefix, then by substring."""
    low = fragment.lower()
    prefix = [p for p in paths if p.lower().startswith(low)]
    named = [p for p in paths if not p.lower().startswith(low) and _name(p).lower().startswith(low)]
    taken = set(prefix) | set(named)
    inside = [p for p in paths if p not in taken and low in p.lower()] if low else []
    return prefix + named + inside


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def scan(workspace: Path) -> list[str]:
    """Files and directories below ``workspace``, relative, not ignored, at most `MAX_PATHS`."""
    root = workspace.resolve()
    ignore = GitIgnore(root)
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        base = Path(current)
        rel = base.relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        dirs[:] = sorted(d for d in dirs if not ignore.is_ignored(base / d, is_dir=True))
        found += [f"{prefix}{d}/" for d in dirs]
        found += [f"{prefix}{f}" for f in sorted(files) if not ignore.is_ignored(base / f, False)]
        if len(found) >= MAX_PATHS:
            return found[:MAX_PATHS]
    return found
