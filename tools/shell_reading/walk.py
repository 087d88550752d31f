"""The walk over a parsed command: every simple command, redirection, function and
substitution, in one pass with an explicit stack (no recursion, however deep the nesting).

Measured on a 100 kB script of 7,500 simple commands (``benchmarks/command_tree.py``):
reading nodes from tree-sitter is cheap (the children of all 50,000 nodes of that script
take 7 ms to fetch), the Python done per node is what costs. So node kinds are compared as
the grammar's numbers in tables made once (`Kinds`), a node is pushed with only what its
children inherit (its parent is asked of tree-sitter in the rare case it matters), and a
command of plain words is read from its text (once for each different text) without
fetching its children, as is one of plain words and ``$(…)`` of plain words when the
grammar made of it as many nodes as its text says.

There are two loops over the same stack. `Reading.visit` reads any node, in any tree; the
fast loop of a tree the grammar read without error reads the common nodes outside functions
itself, the same way with fewer steps, and hands every other node to `visit`. Reading a
command with ``shortcut=False`` takes `visit` for every node and reads every command's
words from its children, which tests compare with the fast loop
(``tests/tools/test_shell_reading_shortcut.py``).
"""

from __future__ import annotations

import re
from typing import Any

from tools.shell_reading.command_words import CommandWords
from tools.shell_reading.commands import CommandReader, Nested
from tools.shell_reading.found import Found, Frame, Pipe
from tools.shell_reading.kinds import (
    AMP,
    COMMAND,
    DECLARATION,
    FUNCTION,
    LEAF,
    OTHER,
    PIPELINE,
    REDIRECT,
    SUBSTITUTION,
    TOKEN,
    kinds_of,
)
from tools.shell_reading.model import CommandAnalysis, SimpleCommand
from tools.shell_reading.plain import (
    GENERAL,
    PlainCommand,
    Substituted,
    read_plain,
    read_substituted,
)
from tools.shell_reading.words import Word, text_of

_Item = tuple[Any, "Pipe | None", "int | None", "Frame | None"]
"""A node to visit, its pipeline place, the place in `Found.commands` of the command whose
words hold it, and the function it is in."""
_PLAIN_WRITE = re.compile(r">>?[ \t]*([\w./,:@%+-]+)", re.ASCII)
"""A redirection that writes (or appends to) a file of a plain name: nothing in it to
unquote, expand or visit."""
_new = tuple.__new__
_UNREAD = PlainCommand(SimpleCommand("", (), ""), GENERAL)
"""`Reading.plans` of a text not read yet."""


class Reading:
    """One command's walk; `result` gives the analysis."""

    def __init__(
        self, text: str, source: bytes, depth: int, nested: Nested, *, shortcut: bool = True
    ) -> None:
        self.text = text
        self.source = source
        self.found = Found()
        self.reader = CommandReader(self.found, depth, nested)
        self._told_unreadable = False
        self._shortcut = shortcut
        """Whether the fast loop reads the tree (when the grammar read it without error)."""
        self._broken = False
        self.plans: dict[str, PlainCommand | None] = {}
        """Each text of a command read so far, as a command of plain words (`read_plain`)."""

    def walk(self, tree: Any) -> None:
        """Visit every node of ``tree`` that can run, write or read something."""
        root = tree.root_node
        kinds = kinds_of(tree.language)
        self._kinds = kinds
        self._words = CommandWords(self.text, self.source, kinds, self.reader)
        self._broken = root.has_error
        stack: list[_Item] = [(root, None, None, None)]
        if self._shortcut and not self._broken:
            self._fast(stack)
        visit, pop = self.visit, stack.pop
        while stack:
            visit(pop(), stack)

    def _fast(self, stack: list[_Item]) -> None:
        """Empty ``stack`` as `visit` would, reading the common nodes outside functions in
        fewer steps: a command of plain words from its text, the others' children kept to
        those that can hold something."""
        kinds = self._kinds
        roles, visited = kinds.roles, kinds.visited
        found, whole, source, ascii = self.found, self.text, self.source, self.source.isascii()
        plans, run_plain, visit = self.plans, self.reader.run_plain, self.visit
        write, file_redirect = self.reader.write, kinds.file_redirect
        pop, push = stack.pop, stack.append
        while stack:
            item = pop()
            node, pipe, owner, frame = item
            role = roles.get(node.kind_id)
            if frame is not None:
                visit(item, stack)
            elif role == COMMAND:
                start, end = node.start_byte, node.end_byte
                text = whole[start:end] if ascii else text_of(node, source)
                plan = plans.get(text, _UNREAD)
                if plan is _UNREAD:
                    plan = plans[text] = read_plain(text)
                if (
                    plan is not None
                    and plan.step != GENERAL
                    and len(plan.alone.argv) == node.named_child_count  # one word per child
                ):
                    name = run_plain(plan, pipe, None)
                    if owner is not None:
                        found.substitute(owner, [name])
                    continue
                substituted = read_substituted(text) if plan is None else None
                # the grammar made of it what its text says: as many nodes
                if (
                    substituted is None
                    or substituted.nodes != node.descendant_count
                    or not self._run_substituted(node, substituted, pipe, owner)
                ):
                    self._command(node, role, pipe, owner, None, stack)
            elif role == OTHER:  # (no token is in `visited`: reading them all is quicker)
                for child in reversed(node.children):
                    if child.kind_id in visited:
                        push((child, pipe, owner, None))
            elif role == SUBSTITUTION:
                for child in reversed(node.children):
                    if child.kind_id in visited:
                        push((child, None, owner, None))
            elif role == PIPELINE:
                line, place = pipe if pipe is not None else (found.pipeline(), ())
                members = node.named_children
                for i in range(len(members) - 1, -1, -1):
                    push((members[i], (line, (*place, i)), owner, None))
            elif role == REDIRECT:
                text = whole[node.start_byte : node.end_byte] if ascii else text_of(node, source)
                plain_write = _PLAIN_WRITE.fullmatch(text)
                if plain_write is not None and node.kind_id in file_redirect:
                    write(_new(Word, (plain_write[1], True, False)))
                else:
                    visit(item, stack)
            else:
                visit(item, stack)

    def visit(self, item: _Item, stack: list[_Item]) -> None:
        """Read one node: record what it runs, writes or reads, and push its children that
        can hold more."""
        node, pipe, owner, frame = item
        kinds = self._kinds
        role = kinds.roles.get(node.kind_id)
        if role is None:
            role = kinds.role(node)
        broken = self._broken
        if broken and (node.is_error or node.is_missing):
            self._unreadable(node)
        if role in (COMMAND, DECLARATION):
            self._command(node, role, pipe, owner, frame, stack)
            return
        if role == PIPELINE:
            self._pipeline(node, pipe, owner, frame, stack)
            return
        if role == SUBSTITUTION:
            pipe = None
        elif role == FUNCTION:
            name = node.child_by_field_name("name")
            frame = Frame(text_of(name, self.source) if name is not None else "")
            self.found.frames.append(frame)
        if broken or frame is not None or role == REDIRECT:
            children = node.children
            if role == REDIRECT:
                self._words.redirect(node, children)
        else:  # tokens are left in the tree: only an ``&`` in a function matters
            children = node.named_children
        self._push(children, pipe, owner, frame, stack)

    def _push(
        self,
        children: list[Any],
        pipe: Pipe | None,
        owner: int | None,
        frame: Frame | None,
        stack: list[_Item],
    ) -> None:
        """Push the ``children`` that can hold something to read."""
        kinds, broken = self._kinds, self._broken
        if frame is not None and not frame.forks:
            frame.forks = any(c.kind_id in kinds.amp for c in children)
        roles = kinds.roles
        for child in reversed(children):
            if broken:
                child_role = roles.get(child.kind_id)
                if child_role is None:
                    child_role = kinds.role(child)
                if child_role in (TOKEN, AMP) or (child_role == LEAF and not child.has_error):
                    continue
            elif child.kind_id not in kinds.visited:
                continue
            stack.append((child, pipe, owner, frame))

    def _command(
        self,
        node: Any,
        role: int,
        pipe: Pipe | None,
        owner: int | None,
        frame: Frame | None,
        stack: list[_Item],
    ) -> None:
        """Read a simple command, and push the children of it that hold more than a plain
        word (every child where its words were not read one by one)."""
        found = self.found
        at = len(found.commands)
        children = node.children
        created, inside = self._words.simple(node, children, role, pipe, frame)
        if owner is not None and created:
            found.substitute(owner, [c.name for c in created])
        if created:
            owner = at
        if inside is None or self._broken:
            self._push(children, None, owner, frame, stack)
            return
        # Its plain words were read; only what holds more is visited.
        for child in reversed(inside):
            stack.append((child, None, owner, frame))

    def _run_substituted(
        self, node: Any, command: Substituted, pipe: Pipe | None, owner: int | None
    ) -> bool:
        """Record a command of plain words and ``$(…)`` of plain words (`read_substituted`)
        and the commands of its substitutions, as `_command` and the walk of its
        substitutions' nodes would; False (nothing recorded) when one of those runs more
        (a wrapper, a shell...), to be read from the tree."""
        plans = []
        for inside in command.inside:
            plan = self.plans.get(inside, _UNREAD)
            if plan is _UNREAD:
                plan = self.plans[inside] = read_plain(inside)
            if plan is None or plan.step == GENERAL:
                return False
            plans.append(plan)
        found, reader = self.found, self.reader

        def stdin() -> Word | None:
            return self._words.stdin(node.children, node.parent)

        names = tuple(dict.fromkeys([plan.alone.name for plan in plans]))
        created = reader.run(command.words, (), pipe, None, "", False, stdin, names)
        if owner is not None:
            found.substitute(owner, [c.name for c in created])
        for plan in plans:
            reader.run_plain(plan, None, None)
        return True

    def _pipeline(
        self,
        node: Any,
        pipe: Pipe | None,
        owner: int | None,
        frame: Frame | None,
        stack: list[_Item],
    ) -> None:
        """Push a pipeline's members, each with its place in it (in a member of another, it
        is part of that one: `Pipe`; `_fast` does the same outside functions)."""
        if frame is not None:
            frame.forks = True
        line, place = pipe if pipe is not None else (self.found.pipeline(), ())
        members = node.named_children
        for i in range(len(members) - 1, -1, -1):
            stack.append((members[i], (line, (*place, i)), owner, frame))

    def _unreadable(self, node: Any) -> None:
        if self._told_unreadable:
            return
        self._told_unreadable = True
        shown = text_of(node, self.source).strip()[:40]
        shown = shown or text_of(node.parent or node, self.source).strip()[:40]
        self.found.unknown.append(f"the shell cannot read the part near `{shown or 'the end'}`")

    def result(self) -> CommandAnalysis:
        """The analysis, frozen."""
        return self.found.result(self.text)
