"""The grammar's node kinds as tree-sitter numbers them, each with what the walk does with it.

Comparing numbers instead of ``Node.type`` (which builds a new string on every read) took a
tenth off the walk of a 100 kB script.
"""

from __future__ import annotations

import threading
from typing import Any

from tools.shell_reading.words import DYNAMIC, PLAIN

OTHER, LEAF, COMMAND, DECLARATION, PIPELINE, SUBSTITUTION, FUNCTION, REDIRECT = range(8)
TOKEN, AMP = 8, 9
"""Roles: unnamed nodes are a `TOKEN`, or `AMP` for ``&`` (which forks)."""
_NOT_VISITED = (TOKEN, AMP, LEAF)
SKIPPED, FORKS, PLAIN_WORD, NUMBER, NAME, DROPPED, DYNAMIC_WORD, ASSIGNMENT, OTHER_LEAF = range(9)
OTHER_WORD = 9
"""What a command's child is to its words (`Kinds.word_role`): a token (`SKIPPED`, or an
``&`` that `FORKS`), a plain word, a number (plain unless it holds an expansion), the
command's name, a redirection (`DROPPED`), an expansion, a ``NAME=value``, or another word
with nothing inside (`OTHER_LEAF`) or holding more (`OTHER_WORD`)."""
_ERROR = 0xFFFF
"""The number tree-sitter gives an ``ERROR`` node."""

_LEAVES = frozenset(
    {"word", "raw_string", "ansi_c_string", "comment", "heredoc_end", "heredoc_start"}
    | {"variable_name", "string_content", "file_descriptor", "special_variable_name"}
    | {"heredoc_content", "test_operator", "regex", "extglob_pattern"}
)
"""Nodes with nothing inside that runs, writes or reads (their parents read them). Not
``number``: a number in a base may be given by an expansion (``16#$(cmd)``)."""
_ROLES = {
    "command": COMMAND,
    "declaration_command": DECLARATION,
    "unset_command": DECLARATION,
    "pipeline": PIPELINE,
    "command_substitution": SUBSTITUTION,
    "process_substitution": SUBSTITUTION,
    "function_definition": FUNCTION,
    "file_redirect": REDIRECT,
    "heredoc_redirect": REDIRECT,
}


def _role(name: str, named: bool) -> int:
    if not named:
        return AMP if name == "&" else TOKEN
    return _ROLES.get(name, LEAF if name in _LEAVES else OTHER)


class Kinds:
    """One grammar's node kinds: ``roles`` by kind number, and the numbers of the kinds a
    command's words are read by (one name can have several numbers)."""

    def __init__(self, language: Any) -> None:
        names = [
            (language.node_kind_for_id(i), language.node_kind_is_named(i))
            for i in range(language.node_kind_count)
        ]
        self.roles = {i: _role(name, named) for i, (name, named) in enumerate(names)}

        def numbered(*wanted: str) -> frozenset[int]:
            return frozenset(i for i, (name, named) in enumerate(names) if named and name in wanted)

        self.plain = numbered(*PLAIN)
        """Words whose value is their text unquoted (`words.plain`), unless they hold more
        (only a `number` can: ``16#$(cmd)``)."""
        self.number = numbered("number")
        self.dynamic = numbered(*DYNAMIC)
        self.heredoc_redirect = numbered("heredoc_redirect")
        self.file_redirect = numbered("file_redirect")
        self.process_substitution = numbered("process_substitution")
        self.names = dict(enumerate(name for name, _ in names))
        """Each kind's name, by number."""
        self.destination = language.field_id_for_name("destination")
        self.command_name = numbered("command_name")
        self.assignment = numbered("variable_assignment")
        self.dropped = numbered("file_redirect", "herestring_redirect")
        """A command's children that are not its words."""
        self.roles[_ERROR] = OTHER
        self.visited = frozenset(i for i, role in self.roles.items() if role not in _NOT_VISITED)
        """Kinds whose nodes hold something to read: not tokens, not leaves."""
        self.amp = frozenset(i for i, role in self.roles.items() if role == AMP)
        leaves = frozenset(i for i, role in self.roles.items() if role == LEAF)
        # `Reading._words` visits every one of these (none is a leaf)
        assert not (self.dropped | self.dynamic | self.assignment) & leaves
        self.word_roles = {i: self._word_role(i, role) for i, role in self.roles.items()}
        """What each kind is to a command's words, by number."""

    def _word_role(self, kind: int, role: int) -> int:
        if role in (TOKEN, AMP):
            return FORKS if role == AMP else SKIPPED
        if kind in self.number:
            return NUMBER
        if kind in self.plain:
            return PLAIN_WORD
        if kind in self.command_name:
            return NAME
        if kind in self.dropped:
            return DROPPED
        if kind in self.dynamic:
            return DYNAMIC_WORD
        if kind in self.assignment:
            return ASSIGNMENT
        return OTHER_LEAF if role == LEAF else OTHER_WORD

    def word_role(self, node: Any) -> int:
        """What ``node`` is to the words of the command it is a child of."""
        found = self.word_roles.get(node.kind_id)
        if found is None:
            found = self.word_roles[node.kind_id] = self._word_role(node.kind_id, self.role(node))
        return found

    def role(self, node: Any) -> int:
        """What the walk does with ``node`` (kinds missing from the table, such as ``ERROR``,
        are looked up by name once)."""
        role = self.roles.get(node.kind_id)
        if role is None:
            role = self.roles[node.kind_id] = _role(node.type, node.is_named)
        return role


_lock = threading.Lock()
_known: dict[Any, Kinds] = {}


def kinds_of(language: Any) -> Kinds:
    """The `Kinds` of ``language``, made once."""
    with _lock:
        found = _known.get(language)
        if found is None:
            found = _known[language] = Kinds(language)
        return found
