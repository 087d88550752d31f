"""Which files the tools skip: ``.git`` and whatever ``.gitignore`` files ignore.

A small matcher for the common ``.gitignore`` syntax (``*``, ``?``, ``[...]``, ``**``,
anchoring with ``/``, directory-only patterns ending in ``/``, negation with ``!``).
Each directory's ``.gitignore`` applies below that directory, as in git.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

import re2

ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn"})


def glob_to_regex(pattern: str) -> str:
    """Translate a glob with ``**`` support into a regex matching a whole POSIX path."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


class _Matcher(Protocol):
    def match(self, text: str) -> object: ...


@dataclass(frozen=True)
class _Rule:
    regex: _Matcher
    negated: bool
    dir_only: bool


MAX_BACKTRACKING_STARS = 2
"""Wildcards a rule may hold and still run on Python's ``re``: each one more multiplies its
worst case by the length of a path, and ``*a*a*a*a*a*a*b`` in a repository's .gitignore held
the GIL past Ctrl-C. Rules with more (rare) run on RE2, linear but ~15x slower per call."""


def _compile(regex: str) -> _Matcher | None:
    """The rule's matcher; None for a many-wildcard rule RE2 cannot run (it is skipped)."""
    if regex.count("*") <= MAX_BACKTRACKING_STARS:
        return re.compile(regex)
    options = re2.Options()
    options.log_errors = False
    try:
        return cast(_Matcher, re2.compile(regex, options))
    except re2.error:
        return None


def _parse_rule(line: str) -> _Rule | None:
    line = line.rstrip("\n").rstrip()
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    line = line.removeprefix("\\")
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = glob_to_regex(line)
    regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
    matcher = _compile(regex)
    return _Rule(matcher, negated, dir_only) if matcher is not None else None


class GitIgnore:
    """Decides whether a path below ``root`` is ignored, reading ``.gitignore`` files lazily."""

    def __init__(self, root: Path) -> None:
        self._root = root.resolve()
        self._prefix = str(self._root).rstrip("/") + "/"
        self._rules: dict[str, list[_Rule]] = {}
        """Each directory's rules, by its path relative to the root ("" for the root)."""

    def _read(self, gitignore: Path) -> str:
        """A ``.gitignore`` file's text ("" when there is none)."""
        try:
            return gitignore.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _rules_in(self, directory: str) -> list[_Rule]:
        rules = self._rules.get(directory)
        if rules is None:
            text = self._read(self._root / directory / ".gitignore")
            rules = [rule for line in text.splitlines() if (rule := _parse_rule(line))]
            self._rules[directory] = rules
        return rules

    def is_ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether ``path`` (inside the root) is ignored; the last matching rule wins."""
        text = str(path)
        if text.startswith(self._prefix):
            return self.is_ignored_relative(text[len(self._prefix) :], is_dir)
        return self.is_ignored_relative(path.relative_to(self._root).as_posix(), is_dir)

    def is_ignored_relative(self, rel: str, is_dir: bool) -> bool:
        """`is_ignored` for ``rel``, a ``/``-separated path from the root. On strings: a scan
        asks for every entry, and with `Path` objects the question cost more than the file."""
        if rel in ("", "."):  # the root itself
            return False
        parts = rel.split("/")
        if parts[-1] in ALWAYS_SKIPPED:
            return True
        ignored = False
        for depth in range(len(parts)):
            sub = "/".join(parts[depth:])
            for rule in self._rules_in("/".join(parts[:depth])):
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.match(sub):
                    ignored = not rule.negated
        return ignored

    def walk(self, start: Path) -> Iterator[Path]:
        """Yield every file below ``start`` that is not ignored, in sorted order.

        Ignored directories are not entered; symlinked directories are not followed and
        symlinks that point outside the root are skipped.
        """
        for current, dirs, files in os.walk(start):
            base = Path(current)
            dirs[:] = sorted(d for d in dirs if not self.is_ignored(base / d, is_dir=True))
            for name in sorted(files):
                path = base / name
                if self._escapes(path) or self.is_ignored(path, is_dir=False):
                    continue
                yield path

    def _escapes(self, path: Path) -> bool:
        """Whether ``path`` is a symlink to something outside the root."""
        return path.is_symlink() and self._root not in path.resolve().parents
