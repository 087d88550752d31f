"""A shell word's value as the shell would see it: quotes removed, escapes and line
continuations applied, and whether anything in it is only known when the command runs."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

_PLAIN_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_QUOTED_ESCAPE = re.compile(r'\\([\\$`"\n])')
_ANSI_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(.))",
    re.DOTALL,
)
_ANSI_NAMED = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_GLOB = re.compile(r"(?<!\\)[*?\[{]")
DYNAMIC = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)
"""Nodes whose value is known only when the command runs."""
PLAIN = frozenset({"word", "number", "extglob_pattern", "special_variable_name", "variable_name"})
"""Nodes whose value is their text, unquoted (`plain`)."""
_MAX_NESTING = 64
"""Deeper words (``${a:-${b:-...}}``) are taken as unknown rather than read recursively."""


class Word(NamedTuple):
    """A word's ``value``; ``literal`` when it holds no expansion; ``pattern`` when an unquoted
    ``*``, ``?``, ``[`` or ``{`` may make the shell expand it into other words.

    A named tuple, not a frozen dataclass: a 100 kB script has tens of thousands of words,
    and a named tuple is made in a third of the time."""

    value: str
    literal: bool = True
    pattern: bool = False


def known(value: str) -> Word:
    """``Word(value)``, made faster (the named tuple's own ``__new__`` is a Python function)."""
    return _new(Word, (value, True, False))


_new = tuple.__new__


def plain(text: str) -> Word:
    """The value of an unquoted word (a `PLAIN` node) written ``text``."""
    maybe = "*" in text or "?" in text or "[" in text or "{" in text
    if not maybe and "\\" not in text:  # most words: nothing to unescape or match
        return _new(Word, (text, True, False))
    return Word(_unescape_plain(text), pattern=maybe and _GLOB.search(text) is not None)


def text_of(node: Any, source: bytes) -> str:
    """The node's text in ``source`` (sliced here: tree-sitter's ``Node.text`` copies the
    whole source on every call, which made a 100 kB command take seconds)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _unescape_plain(text: str) -> str:
    if "\\" not in text:
        return text
    return _PLAIN_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], text)


def _unescape_quoted(text: str) -> str:
    return _QUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], text)


def _ansi_char(match: re.Match[str]) -> str:
    named, octal, hexa, short, long, control = match.groups()
    if named is not None:
        return _ANSI_NAMED.get(named, named)
    if control is not None:
        return chr(ord(control) & 0x1F)
    digits, base = next((d, b) for d, b in ((octal, 8), (hexa, 16), (short, 16), (long, 16)) if d)
    code = int(digits, base)
    return chr(code) if code <= 0x10FFFF else "\ufffd"


def ansi_c(text: str) -> str:
    """The value of ``$'...'`` given its inside."""
    return _ANSI_ESCAPE.sub(_ansi_char, text)


def word(node: Any, source: bytes, depth: int = 0) -> Word:
    """The value of a word-like node (``word``, strings, concatenations, expansions)."""
    kind = node.type
    if kind in ("concatenation", "command_name") and depth <= _MAX_NESTING:
        return _joined(node, source, depth)
    text = text_of(node, source)
    if kind in PLAIN:
        if kind == "number" and node.named_child_count:  # ``16#$(cmd)``
            return Word(text, literal=False)
        return plain(text)
    if kind == "raw_string":
        return Word(text[1:-1])
    if kind == "ansi_c_string":
        return Word(ansi_c(text[2:-1]))
    if kind in DYNAMIC or depth > _MAX_NESTING:
        return Word(text, literal=False)
    if kind in ("string", "translated_string"):
        inner = text[text.index('"') + 1 : -1] if '"' in text else text
        literal = all(child.type == "string_content" for child in node.named_children)
        return Word(_unescape_quoted(inner), literal=literal)
    return Word(text, literal=False)


def _joined(node: Any, source: bytes, depth: int) -> Word:
    """Adjacent parts, with any gap between them (an unnamed token) taken as written."""
    children = node.children
    if len(children) == 1:  # a command's name is mostly one word: the same span
        only = children[0]
        if only.is_named and (only.start_byte, only.end_byte) == (node.start_byte, node.end_byte):
            return word(only, source, depth + 1)
    values: list[str] = []
    literal, pattern = True, False
    at = node.start_byte
    for child in children:
        if child.start_byte > at:
            gap = source[at : child.start_byte].decode("utf-8", "replace")
            values.append(_unescape_plain(gap))
            pattern |= _GLOB.search(gap) is not None
        part = word(child, source, depth + 1) if child.is_named else Word(text_of(child, source))
        if not child.is_named:
            pattern |= _GLOB.search(part.value) is not None
        values.append(part.value)
        literal &= part.literal
        pattern |= part.pattern
        at = child.end_byte
    if node.end_byte > at:
        values.append(_unescape_plain(source[at : node.end_byte].decode("utf-8", "replace")))
    return Word("".join(values), literal, pattern)


def continued(source: bytes, end: int, start: int) -> bool:
    """Whether the text between two nodes is only line continuations (backslash, new line):
    the shell then reads them as one word (``tou\\<new line>ch`` is ``touch``)."""
    gap = source[end:start]
    return bool(gap) and gap.replace(b"\\\n", b"") == b""


def glued(parts: list[Word]) -> Word:
    """Words the shell reads as one."""
    if len(parts) == 1:
        return parts[0]
    return Word(
        "".join(p.value for p in parts),
        all(p.literal for p in parts),
        any(p.pattern for p in parts),
    )
