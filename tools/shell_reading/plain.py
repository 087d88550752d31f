"""Commands of plain words (nothing to unquote, expand or match), read from their text.

A long script repeats its commands (``grep -v x`` on every line): each different text is
read once per analysis into a `PlainCommand`, its program, words and the files it names,
and every later one only records it. A command of plain words and whole words ``$(…)`` of
plain words (``echo 3 $(date)``) is read from its text too (`read_substituted`), with the
number of nodes the grammar makes of it: the walk takes that reading only where the tree
has exactly that many.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from tools.shell_reading import files
from tools.shell_reading.model import SimpleCommand
from tools.shell_reading.words import Word, known
from tools.shell_reading.wrappers import SHELLS, WRAPPERS

NOT_PLAIN = re.compile(r"[^\w./,:@%+ \t-]", re.ASCII)
"""A character that keeps a command's words from being plain: a quote, ``$``, a backslash,
a pattern, ``=`` (assignments), a redirection... A command (whose text starts and ends with
a word) of plain words only holds nothing to unquote, expand or match."""
NOTHING, MOVES, FILES, GENERAL = range(4)
"""What is read past a plain command's name: nothing, where it moves, the files it names, or
everything `CommandReader.run` reads."""
_STARTS_OTHERS = SHELLS | frozenset(
    {"eval", "watch", "trap", "alias", "hash", "source", ".", "xargs", "find", "cd", "pushd"}
    | {"su", "sg", "runuser", "script", "flock"}
)
"""Programs that run text or other programs, or move (``cd``): read past their name."""
_new = tuple.__new__
QUIET = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
"""Files a write to is no write (``/dev/fd/…`` too)."""


class PlainCommand(NamedTuple):
    """A command of plain words, read once: what `CommandReader.run_plain` records of it."""

    alone: SimpleCommand
    """Its record where it stands in no pipeline (the same every time: one record serves)."""
    step: int
    """`NOTHING`, `MOVES`, `FILES`, or `GENERAL`: read by `CommandReader.run` instead."""
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()


@lru_cache(maxsize=64)
def _literal(count: int) -> tuple[bool, ...]:
    """``(True,) * count``, made once for each count."""
    return (True,) * count


@lru_cache(maxsize=4096)
def read_further(name: str) -> bool:
    """Whether anything is read past the name of the program ``name``."""
    return name in _STARTS_OTHERS or files.touches_files(name)


@lru_cache(maxsize=4096)
def _step(name: str) -> int:
    if name in ("cd", "pushd"):
        return MOVES
    if name in WRAPPERS or name in _STARTS_OTHERS:
        return GENERAL
    return FILES if files.touches_files(name) else NOTHING


def read_plain(text: str) -> PlainCommand | None:
    """``text`` read as a command of plain words; None if it is not one."""
    if NOT_PLAIN.search(text) is not None:
        return None
    words = text.split()
    if not words:
        return None
    head = words[0]
    name = head.rpartition("/")[2] or head
    argv = tuple(words)
    # the fields of SimpleCommand, as `Found.add` makes them
    alone = _new(
        SimpleCommand, (name, argv, " ".join(words), (), (), False, "", (), (), _literal(len(argv)))
    )
    step = _step(name)
    if step != FILES:
        return _new(PlainCommand, (alone, step, (), (), ()))
    args = [known(w) for w in words[1:]]
    if files.started_texts(name, args):
        return _new(PlainCommand, (alone, GENERAL, (), (), ()))  # inline code that runs more
    writes = files.writes(name, args)
    reads, searched = files.reads(name, args)
    if any(not w.literal or w.value == "{}" for w in (*writes, *reads, *searched)):
        return _new(PlainCommand, (alone, GENERAL, (), (), ()))  # names known only when it runs
    return PlainCommand(
        alone,
        FILES,
        writes=tuple(w.value for w in writes if not quiet(w.value)),
        reads=tuple(w.value for w in reads),
        searches=tuple(w.value for w in searched),
    )


_PLAIN_WORD = r"[\w./,:@%+-]+"
_PIECE = rf"(?:{_PLAIN_WORD}|\$\([ \t]*{_PLAIN_WORD}(?:[ \t]+{_PLAIN_WORD})*[ \t]*\))"
_SUBSTITUTED = re.compile(rf"{_PIECE}(?:[ \t]+{_PIECE})*", re.ASCII)
"""Plain words and whole words ``$(…)`` of plain words, apart."""
_PIECES = re.compile(r"\$\(([^)]*)\)|(\S+)", re.ASCII)
_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until"}
    | {"do", "done", "in", "function", "time", "coproc", "declare", "typeset", "export"}
    | {"readonly", "local", "unset", "unsetenv"}
)
"""Words the grammar reads as more than a command's name."""


class Substituted(NamedTuple):
    """A command of plain words and ``$(…)`` of plain words (`read_substituted`)."""

    words: list[Word]
    inside: list[str]
    """The text of each substitution's command, in order."""
    nodes: int
    """How many nodes the grammar makes of it (the command's own among them)."""


def read_substituted(text: str) -> Substituted | None:
    """``text`` read as a command of plain words and whole words ``$(…)`` of plain words
    (``echo 3 $(date)``); None if it is not one."""
    if "$(" not in text or _SUBSTITUTED.fullmatch(text) is None:
        return None
    words: list[Word] = []
    inside: list[str] = []
    nodes = 2  # the command, its name
    for piece in text.split():
        if piece[0] != "$":
            words.append(_new(Word, (piece, True, False)))
            nodes += 1
        elif piece[-1] == ")":  # one word inside
            words.append(_new(Word, (piece, False, False)))
            inside.append(piece[2:-1])
            nodes += 6  # $( command command_name word )
        else:  # words apart inside: read piece by piece
            return _read_pieces(text)
    for command in inside:
        if command in _RESERVED:
            return None
    return _new(Substituted, (words, inside, nodes))


def _read_pieces(text: str) -> Substituted | None:
    words: list[Word] = []
    inside: list[str] = []
    nodes = 2
    for piece in _PIECES.finditer(text):
        inner, word = piece.groups()
        if word is not None:
            words.append(_new(Word, (word, True, False)))
            nodes += 1
        else:
            inner_words = inner.split()
            if inner_words[0] in _RESERVED:
                return None
            words.append(_new(Word, (piece[0], False, False)))
            inside.append(inner.strip())
            nodes += len(inner_words) + 5  # $( command command_name word… )
    return _new(Substituted, (words, inside, nodes))


def quiet(path: str) -> bool:
    """Whether writing ``path`` writes no file (``/dev/null``, ``/dev/fd/3``...)."""
    return path in QUIET or path.startswith("/dev/fd/")
