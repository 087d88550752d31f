"""A simple command's words and a redirection's target, read from their nodes.

Measured on a 100 kB script of 7,500 simple commands (``benchmarks/command_analysis.py``):
each child's role among the words is one table look-up by the grammar's kind number
(`Kinds.word_roles`), and a plain word is sliced from the command's text, not read through
its own children.
"""

from __future__ import annotations

from typing import Any

from tools.shell_reading.commands import CommandReader
from tools.shell_reading.found import Found, Frame, Pipe
from tools.shell_reading.kinds import (
    ASSIGNMENT,
    DECLARATION,
    DROPPED,
    DYNAMIC_WORD,
    FORKS,
    NAME,
    NUMBER,
    OTHER_LEAF,
    PLAIN_WORD,
    Kinds,
)
from tools.shell_reading.model import SimpleCommand
from tools.shell_reading.plain import NOT_PLAIN
from tools.shell_reading.words import Word, continued, glued, plain, text_of, word

_WRITING = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>", "&>|"})
_new = tuple.__new__


class CommandWords:
    """Reads the words of one script's simple commands and its redirections' targets into
    a `CommandReader`."""

    def __init__(self, text: str, source: bytes, kinds: Kinds, reader: CommandReader) -> None:
        self.text = text
        self.source = source
        self.kinds = kinds
        self.reader = reader
        self.found: Found = reader.found
        self._ascii = source.isascii()

    def text_of(self, node: Any) -> str:
        """``node``'s text."""
        if self._ascii:  # the same offsets in the text: no slice of bytes to decode
            return self.text[node.start_byte : node.end_byte]
        return text_of(node, self.source)

    def simple(
        self,
        node: Any,
        children: list[Any],
        role: int,
        pipe: Pipe | None,
        frame: Frame | None,
    ) -> tuple[list[SimpleCommand], list[Any] | None]:
        """The commands a simple command makes, and its children that hold more than a
        plain word, to be visited; None: visit every child."""
        source = self.source
        if role == DECLARATION:
            words = [Word(text_of(children[0], source))]
            words += [word(c, source) for c in children if c.is_named]
            return self.reader.run(words, (), pipe, frame, "", False), None
        inside: list[Any] | None = None
        if source.find(b"\\\n", node.start_byte, node.end_byte) >= 0:
            words, assigned = self._continued_words(children)
        else:
            words, assigned, inside = self._words(children, frame)
        if not words:
            return [], inside

        def stdin() -> Word | None:
            return self.stdin(children, node.parent)

        names = tuple(assigned) if assigned else ()
        return self.reader.run(words, names, pipe, frame, "", False, stdin), inside

    def _words(
        self, children: list[Any], frame: Frame | None
    ) -> tuple[list[Word], list[str], list[Any]]:
        """A command's words (after its ``NAME=value`` ones), those, and the children that
        hold more than a plain word."""
        kinds = self.kinds
        word_roles, whole, source, ascii = kinds.word_roles, self.text, self.source, self._ascii
        not_plain = NOT_PLAIN.search
        words: list[Word] = []
        assigned: list[str] = []
        inside: list[Any] = []
        for child in children:
            how = word_roles.get(child.kind_id)
            if how is None:
                how = kinds.word_role(child)
            if how == PLAIN_WORD or (how == NUMBER and not child.named_child_count):
                text = whole[child.start_byte : child.end_byte] if ascii else text_of(child, source)
                words.append(plain(text))
            elif how <= FORKS:  # a token
                if how == FORKS and frame is not None:
                    frame.forks = True
            elif how == NAME:
                text = whole[child.start_byte : child.end_byte] if ascii else text_of(child, source)
                if not_plain(text) is None:  # one plain word: nothing to unquote or visit
                    words.append(_new(Word, (text, True, False)))
                else:
                    inside.append(child)
                    words.append(word(child, source))
            elif how == OTHER_LEAF:
                words.append(word(child, source))
            else:  # what holds more than a word is visited
                inside.append(child)
                if how == DYNAMIC_WORD:  # ``$x``, ``$(cmd)``...: known when it runs
                    text = (
                        whole[child.start_byte : child.end_byte]
                        if ascii
                        else text_of(child, source)
                    )
                    words.append(_new(Word, (text, False, False)))
                elif how == ASSIGNMENT and not words:
                    assigned.append(word(child, source).value)
                elif how != DROPPED:
                    words.append(word(child, source))
        return words, assigned, inside

    def _continued_words(self, children: list[Any]) -> tuple[list[Word], list[str]]:
        """`_words` for a command with line continuations, which join the words around them
        as the shell joins them (``tou\\<new line>ch`` is ``touch``)."""
        words: list[Word] = []
        assigned: list[str] = []
        groups: list[list[Any]] = []
        for child in children:
            if not child.is_named:
                continue
            if groups and continued(self.source, groups[-1][-1].end_byte, child.start_byte):
                groups[-1].append(child)
            else:
                groups.append([child])
        for group in groups:
            value = glued([word(part, self.source) for part in group])
            if group[0].type == "variable_assignment" and not words:
                assigned.append(value.value)
            elif group[0].type not in ("file_redirect", "herestring_redirect"):
                words.append(value)
        return words, assigned

    def stdin(self, children: list[Any], parent: Any) -> Word | None:
        """What a here-string, a here-document or ``< file`` gives the command as input;
        not literal when it is only known when the command runs."""
        source = self.source
        for child in children:
            if child.type == "herestring_redirect" and child.named_children:
                return word(child.named_children[0], source)
        if parent is None or parent.type != "redirected_statement":
            return None
        for redirect in parent.children:
            if redirect.type == "heredoc_redirect":
                start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
                body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
                quoted = start is not None and any(q in text_of(start, source) for q in "'\"\\")
                literal = quoted or body is None or not body.named_children
                return Word(text_of(body, source) if body else "", literal)
            if redirect.type == "file_redirect" and any(c.type == "<" for c in redirect.children):
                return Word(text_of(redirect, source), literal=False)
        return None

    def redirect(self, node: Any, children: list[Any]) -> None:
        """Record the file a redirection writes or reads."""
        kinds = self.kinds
        if node.kind_id in kinds.heredoc_redirect:
            return
        destination = node.child_by_field_id(kinds.destination)
        if destination is None or destination.kind_id in kinds.process_substitution:
            return
        operator = ""
        for child in children:
            if not child.is_named:
                operator = kinds.names.get(child.kind_id) or child.type
                break
        kind = destination.kind_id
        if kind in kinds.plain and not (kind in kinds.number and destination.named_child_count):
            target = plain(self.text_of(destination))
        else:
            target = word(destination, self.source)
        if operator in _WRITING:
            if kind in kinds.number and operator in (">&", "<&"):
                return
            self.reader.write(target)
        if operator in ("<", "<>") and target.literal:
            self.found.reads.append(target.value)
