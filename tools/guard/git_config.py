"""Git's configuration files, read as git reads them, for what they make git run or read.

`read_config` parses one file and the files it pulls in (``include.path``, and every
``includeIf.*.path`` whatever its condition, since the condition can become true later) into
``(key, value, file)`` entries. Keys come lower-cased as ``section.name`` or
``section.subsection.name`` (the subsection keeps its case). A file is read only when it is
a regular file of at most 1 MiB; nothing here runs git or follows a FIFO or a device.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 1 << 20
_MAX_DEPTH = 10
"""How deep includes nest before git itself refuses (its limit is 10, too)."""
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Entry:
    """One ``key = value`` line, and the file it is in."""

    key: str
    value: str | None
    """None for a key given without ``=`` (a boolean true)."""
    file: Path


def read_text(path: Path) -> str | None:
    """The text of ``path`` when it is a regular file of at most `MAX_BYTES`, else None."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    return None if len(data) > MAX_BYTES else data.decode("utf-8", "replace")


def read_config(path: Path, home: Path | None) -> list[Entry]:
    """The entries of ``path`` and of every file it includes (depth-first, as git reads)."""
    found: list[Entry] = []
    _read_into(path, home, found, depth=0, seen=set())
    return found


def include_target(value: str, file: Path, home: Path | None) -> Path | None:
    """Where an include path points: ``~/`` from home, relative to the including file."""
    if value.startswith("~/"):
        return None if home is None else home / value[2:]
    if value.startswith("%(prefix)/"):
        return None
    target = Path(value)
    return target if target.is_absolute() else file.parent / target


def is_include(key: str) -> bool:
    """Whether ``key`` names a file git reads as more configuration."""
    return key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))


def _read_into(
    path: Path, home: Path | None, found: list[Entry], depth: int, seen: set[str]
) -> None:
    real = os.path.realpath(path)
    if depth > _MAX_DEPTH or real in seen:
        return
    seen.add(real)
    text = read_text(path)
    if text is None:
        return
    for key, value in parse(text):
        found.append(Entry(key, value, path))
        if is_include(key) and value:
            target = include_target(value, path, home)
            if target is not None:
                _read_into(target, home, found, depth + 1, seen)


def parse(text: str) -> Iterator[tuple[str, str | None]]:
    """``(key, value)`` for each variable in git-config ``text``; bad lines are skipped."""
    section = ""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if line.startswith("["):
            header, rest = _header(line)
            if header is None:
                continue
            section, line = header, rest.strip()
        if not line or line[0] in "#;" or not section:
            continue
        name, _, raw = line.partition("=")
        name = name.strip().lower()
        if not name or not (name[0].isalpha() and all(c.isalnum() or c == "-" for c in name)):
            continue
        if not _:
            yield f"{section}.{name}", None
            continue
        value, more = _value(raw)
        while more and index < len(lines):  # a backslash at the end continues the value
            extra, more = _value(lines[index], started=True)
            value += extra
            index += 1
        yield f"{section}.{name}", value


def _header(line: str) -> tuple[str | None, str]:
    """``[section]``, ``[section "sub"]`` or ``[section.sub]``, and the text after it."""
    end = line.find("]")
    if end < 0:
        return None, ""
    inner = line[1:end]
    quote = inner.find('"')
    if quote < 0:
        if " " in inner.strip():
            return None, ""
        name, dot, sub = inner.strip().partition(".")
        return (f"{name.lower()}.{sub.lower()}" if dot else name.lower()), line[end + 1 :]
    # A quoted subsection may hold "]": find the closing quote first.
    name = inner[:quote].strip().lower()
    sub, position = "", line.find('"') + 1
    while position < len(line) and line[position] != '"':
        if line[position] == "\\" and position + 1 < len(line):
            position += 1
        sub += line[position]
        position += 1
    close = line.find("]", position)
    if position >= len(line) or close < 0 or not name:
        return None, ""
    return f"{name}.{sub}", line[close + 1 :]


def _value(raw: str, started: bool = False) -> tuple[str, bool]:
    """The value in ``raw`` (quotes, escapes, comments) and whether it continues;
    ``started``: ``raw`` continues a value, so its leading blanks are kept."""
    out: list[str] = []
    quoted = False
    pending = ""  # whitespace kept only if something follows it
    position = 0
    while position < len(raw):
        char = raw[position]
        position += 1
        if char == "\\":
            if position >= len(raw):
                return "".join(out) + pending, True
            char = _ESCAPES.get(raw[position], raw[position])
            position += 1
        elif char == '"':
            quoted = not quoted
            out.append(pending)
            pending = ""
            continue
        elif not quoted and char in "#;":
            break
        elif not quoted and char.isspace():
            if out or started:
                pending += char
            continue
        out.append(pending + char)
        pending = ""
    return "".join(out), False


def command_words(command: str) -> list[str]:
    """The words of a shell command line, split at blanks and at ``;``, ``&&``, ``|``...
    (quotes removed); a line that cannot be split is split at blanks."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return [word for word in lexer if not set(word) <= set(";&|()<>")]
    except ValueError:
        return command.split()


def quote(word: str) -> str:
    """``word`` quoted for a shell command line."""
    return shlex.quote(word)
