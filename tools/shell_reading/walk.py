"""The walk over a parsed command: every simple command, redirection, function and
substitution, in one pass with an explicit stack (no recursion, however deep the nesting).

Measured on a 100 kB script of 7,500 simple commands (``benchmarks/command_tree.py``):
reading nodes from tree-sitter is cheap (the children of all 50,000 nodes of that script
take 7 ms to fetch), the Python done per node is what costs. So node kinds are compared as
the grammar's numbers in sets made once (`Kinds`), a node is pushed with only what its
children inherit (its parent is asked of tree-sitter in the rare case it matters), and a
command of plain words is read from its text without fetching its children.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tools.shell_reading.commands import CommandReader, Nested
from tools.shell_reading.found import Found, Frame, Pipe
from tools.shell_reading.kinds import (
    AMP,
    COMMAND,
    DECLARATION,
    FUNCTION,
    LEAF,
    PIPELINE,
    REDIRECT,
    SUBSTITUTION,
    TOKEN,
    Kinds,
    kinds_of,
)
from tools.shell_reading.model import CommandAnalysis, SimpleCommand
from tools.shell_reading.words import Word, continued, glued, known, plain, text_of, word

_NOT_PLAIN = re.compile(r"[^\w./,:@%+ \t-]", re.ASCII)
"""A character that keeps a command's words from being plain: a quote, ``$``, a backslash,
a pattern, ``=`` (assignments), a redirection... A command (whose text starts and ends with
a word) of plain words only holds nothing to unquote, expand or match."""
_WRITING = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>", "&>|"})

_Item = tuple[Any, "Pipe | None", "SimpleCommand | None", "Frame | None"]
"""A node to visit, its pipeline place, the command whose words hold it, and the function
it is in."""


class Reading:
    """One command's walk; `result` gives the analysis."""

    def __init__(
        self, text: str, source: bytes, depth: int, nested: Nested, *, shortcut: bool = True
    ) -> None:
        self.text = text
        self.source = source
        self.found = Found()
        self.reader = CommandReader(self.found, depth, nested)
        self._ascii = source.isascii()
        self._told_unreadable = False
        self._shortcut = shortcut
        """Whether a command of plain words is read from its text (`CommandReader.run_plain`)."""
        self._pipelines = itertools.count()
        self._kinds: Kinds

    def walk(self, tree: Any) -> None:
        """Visit every node of ``tree`` that can run, write or read something."""
        root = tree.root_node
        self._kinds = kinds = kinds_of(tree.language)
        roles, visited, amps = kinds.roles, kinds.visited, kinds.amp
        broken = root.has_error
        shortcut = self._shortcut and not broken
        found, whole, source, ascii = self.found, self.text, self.source, self._ascii
        not_plain, run_plain = _NOT_PLAIN.search, self.reader.run_plain
        stack: list[_Item] = [(root, None, None, None)]
        pop, push = stack.pop, stack.append
        while stack:
            node, pipe, owner, frame = pop()
            role = roles.get(node.kind_id)
            if role is None:
                role = kinds.role(node)
            if broken and (node.is_error or node.is_missing):
                self._unreadable(node)
            if role in (COMMAND, DECLARATION):
                if role == COMMAND and shortcut:
                    # A command of plain words is read from its text, without its children.
                    start, end = node.start_byte, node.end_byte
                    text = whole[start:end] if ascii else text_of(node, source)
                    if not_plain(text) is None:
                        parts = text.split()
                        if len(parts) == node.named_child_count:  # one word per child
                            created = run_plain(parts, pipe, frame)
                            if created is None:
                                created = self._run_plain_words(node, parts, pipe, frame)
                            if owner is not None:
                                found.substitute(owner, created)
                            continue
                children = node.children
                created, inside = self._simple(node, children, role, pipe, frame)
                if owner is not None:
                    found.substitute(owner, created)
                if created:
                    owner = created[0]
                if inside is not None and not broken:
                    # Its plain words were read; only what holds more is visited.
                    stack += [(c, None, owner, frame) for c in reversed(inside)]
                    continue
                pipe = None
            elif role == PIPELINE:
                if frame is not None:
                    frame.forks = True
                # In a member of another, it is part of that one (`Pipe`).
                pid, place = pipe if pipe is not None else (next(self._pipelines), ())
                members = node.named_children
                for i in range(len(members) - 1, -1, -1):
                    push((members[i], (pid, (*place, i)), owner, frame))
                continue
            else:
                if role == SUBSTITUTION:
                    pipe = None
                elif role == FUNCTION:
                    name = node.child_by_field_name("name")
                    frame = Frame(text_of(name, self.source) if name is not None else "")
                    self.found.frames.append(frame)
                if broken or frame is not None or role == REDIRECT:
                    children = node.children
                    if role == REDIRECT:
                        self._redirect(node, children)
                else:  # tokens are left in the tree: only an ``&`` in a function matters
                    children = node.named_children
            if frame is not None and not frame.forks:
                frame.forks = any(c.kind_id in amps for c in children)
            if broken:
                for child in reversed(children):
                    child_role = roles.get(child.kind_id)
                    if child_role is None:
                        child_role = kinds.role(child)
                    if child_role not in (TOKEN, AMP) and (child_role != LEAF or child.has_error):
                        push((child, pipe, owner, frame))
            else:
                stack += [
                    (c, pipe, owner, frame) for c in reversed(children) if c.kind_id in visited
                ]

    def _unreadable(self, node: Any) -> None:
        if self._told_unreadable:
            return
        self._told_unreadable = True
        shown = text_of(node, self.source).strip()[:40]
        shown = shown or text_of(node.parent or node, self.source).strip()[:40]
        self.found.unknown.append(f"the shell cannot read the part near `{shown or 'the end'}`")

    def _text(self, node: Any) -> str:
        if self._ascii:  # the same offsets in the text: no slice of bytes to decode
            return self.text[node.start_byte : node.end_byte]
        return text_of(node, self.source)

    def _run_plain_words(
        self, node: Any, words: list[str], pipe: Pipe | None, frame: Frame | None
    ) -> list[SimpleCommand]:
        """`CommandReader.run` for a command of plain ``words`` that `run_plain` leaves."""

        def stdin() -> Word | None:
            return self._stdin(node.children, node.parent)

        return self.reader.run([known(w) for w in words], (), pipe, frame, "", False, stdin)

    def _simple(
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
            return self._stdin(children, node.parent)

        return self.reader.run(words, tuple(assigned), pipe, frame, "", False, stdin), inside

    def _words(
        self, children: list[Any], frame: Frame | None
    ) -> tuple[list[Word], list[str], list[Any]]:
        """A command's words (after its ``NAME=value`` ones), those, and the children that
        hold more than a plain word."""
        kinds = self._kinds
        roles, plains, names = kinds.roles, kinds.plain, kinds.command_name
        words: list[Word] = []
        assigned: list[str] = []
        inside: list[Any] = []
        for child in children:
            kind = child.kind_id
            role = roles.get(kind)
            if role is None:
                role = kinds.role(child)
            if role in (TOKEN, AMP):
                if role == AMP and frame is not None:
                    frame.forks = True
                continue
            if kind in plains and not (kind in kinds.number and child.named_child_count):
                value = plain(self._text(child))
            elif kind in names:
                value, holds_more = self._command_name(child)
                if holds_more:
                    inside.append(child)
            else:
                if role != LEAF:
                    inside.append(child)
                if kind in kinds.dropped:
                    continue
                if kind in kinds.dynamic:  # ``$x``, ``$(cmd)``...: known when it runs
                    value = Word(self._text(child), literal=False)
                else:
                    value = word(child, self.source)
            if kind in kinds.assignment and not words:
                assigned.append(value.value)
            else:
                words.append(value)
        return words, assigned, inside

    def _command_name(self, node: Any) -> tuple[Word, bool]:
        """A command's name, and whether it holds more than one plain word."""
        children = node.children
        if len(children) == 1:
            only = children[0]
            kinds, kind = self._kinds, only.kind_id
            same = only.start_byte == node.start_byte and only.end_byte == node.end_byte
            holds_more = kind in kinds.number and only.named_child_count  # ``16#$(cmd)``
            if same and kind in kinds.plain and not holds_more:
                return plain(self._text(only)), False
        return word(node, self.source), True

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

    def _stdin(self, children: list[Any], parent: Any) -> Word | None:
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

    def _redirect(self, node: Any, children: list[Any]) -> None:
        kinds = self._kinds
        if node.kind_id in kinds.heredoc_redirect:
            return
        destination = node.child_by_field_id(kinds.destination)
        if destination is None or destination.kind_id in kinds.process_substitution:
            return
        operator = next(
            (kinds.names.get(c.kind_id) or c.type for c in children if not c.is_named), ""
        )
        kind = destination.kind_id
        if kind in kinds.plain and not (kind in kinds.number and destination.named_child_count):
            target = plain(self._text(destination))
        else:
            target = word(destination, self.source)
        if operator in _WRITING:
            if kind in kinds.number and operator in (">&", "<&"):
                return
            self.reader.write(target)
        if operator in ("<", "<>") and target.literal:
            self.found.reads.append(target.value)

    def result(self) -> CommandAnalysis:
        """The analysis, frozen."""
        return self.found.result(self.text)
