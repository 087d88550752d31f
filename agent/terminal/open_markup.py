"""Whether more text could still change how the start of a markdown line renders.

A streamed line's rows are printed as soon as they are complete (`agent.terminal.answer_view`),
before the line's newline arrives. That is safe only for text no later character can restyle:
``some `code`` shows its backtick until the closing one arrives, and then the words move. In
CommonMark inline markup is matched left to right, so text whose every delimiter is matched
(or can never open a span) renders the same whatever follows it; a delimiter left as text that
could still open a span means it may not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markdown_it import MarkdownIt
from markdown_it.token import Token

_PARSER = MarkdownIt().enable("strikethrough").enable("table")
"""The parser rich's `Markdown` uses, so the spans found are the spans shown."""

_DELIMITER = re.compile(r"`+|\*+|_+|~~+|\[|<(?=\S)")


def has_open_markup(source: str) -> bool:
    """Whether ``source`` holds a delimiter, shown as text for now, that text appended to it
    could still turn into a span (code, emphasis, strikethrough, a link, an autolink or tag).

    Errs on the side of yes: a delimiter it cannot rule out counts as open.
    """
    return any(_opens(token.content) for token in _texts(_PARSER.parse(source)))


def _texts(tokens: Iterable[Token]) -> Iterable[Token]:
    for token in tokens:
        if token.type == "text":
            yield token
        if token.children:
            yield from _texts(token.children)


def _opens(text: str) -> bool:
    for match in _DELIMITER.finditer(text):
        delimiter, start, end = match.group(), match.start(), match.end()
        before, after = text[start - 1 : start], text[end : end + 1]
        if delimiter[0] in "`<":
            if delimiter == "<" and ">" in text[end:]:
                continue  # not a tag, and it can no longer become one
            return True
        if delimiter == "[":
            if _bracket_waits(text, end):
                return True
            continue
        if after.isspace():
            continue  # not left-flanking: it can only close
        if delimiter[0] == "_" and before.isalnum() and after.isalnum():
            continue  # snake_case: an underscore inside a word opens nothing
        return True
    return False


def _bracket_waits(text: str, start: int) -> bool:
    """Whether the ``[`` before ``start`` may still become a link: its ``]`` has not arrived,
    or is followed by ``(`` without a ``)`` after it."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        depth += (char == "[") - (char == "]")
        if depth == 0:
            rest = text[index + 1 :]
            return rest.startswith("(") and ")" not in rest
    return True
