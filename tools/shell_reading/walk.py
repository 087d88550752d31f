"""The walk over a parsed command: every simple command, redirection, function and
substitution, in one pass with an explicit stack (no recursion, however deep the nesting)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tools.shell_reading import files
from tools.shell_reading.model import CommandAnalysis, SimpleCommand
from tools.shell_reading.words import Word, continued, glued, text_of, word
from tools.shell_reading.wrappers import (
    SHELLS,
    eval_script,
    inner_commands,
    program_name,
    reads_script_from_input,
    shell_script,
    unwrap,
)

MAX_DEPTH = 8
"""How many shells deep (``bash -c``, ``eval``) a command is read; deeper is not knowable."""
_QUIET = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_WRITING = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>", "&>|"})
_LEAVES = frozenset(
    {"word", "raw_string", "number", "ansi_c_string", "comment", "heredoc_end", "heredoc_start"}
    | {"variable_name", "string_content", "file_descriptor", "special_variable_name"}
    | {"heredoc_content", "test_operator", "regex", "extglob_pattern"}
)
"""Nodes with nothing inside that runs, writes or reads (their parents read them)."""
_DECLARATIONS = frozenset({"declaration_command", "unset_command"})
_STARTS_OTHERS = SHELLS | frozenset(
    {"eval", "watch", "trap", "alias", "hash", "source", ".", "xargs", "find", "cd", "pushd"}
    | {"su", "sg", "runuser", "script", "flock"}
)
"""Programs that run text or other programs, or move (``cd``): read past their name."""
_PIPE_NAMES = 64

Nested = Callable[[str, int], CommandAnalysis]
"""Reads a nested script at a depth (the analysis itself, passed in to avoid a cycle)."""


@dataclass
class _Frame:
    """A function being defined: whether its body calls it, and whether it forks."""

    name: str
    calls_itself: bool = False
    forks: bool = False


@dataclass
class _Command:
    """A simple command while the walk still adds to it (what its words substitute)."""

    found: SimpleCommand
    pipe: tuple[int, int] | None = None
    substituted: list[str] = field(default_factory=list)


_Item = tuple[Any, str, "tuple[int, int] | None", "_Command | None", "_Frame | None"]
"""A node to visit, its type (read once: each read builds a new string), and what it is in."""


class Reading:
    """One command's walk; `result` gives the analysis."""

    def __init__(self, text: str, source: bytes, depth: int, nested: Nested) -> None:
        self.text = text
        self.source = source
        self.depth = depth
        self.nested = nested
        self.commands: list[_Command] = []
        self.writes: list[str] = []
        self.reads: list[str] = []
        self.searches: list[str] = []
        self.directories: list[str] = []
        self.unknown: list[str] = []
        self.unknown_reads: list[str] = []
        self.frames: list[_Frame] = []
        self.too_deep = False
        self._told_unreadable = False
        self._pipelines = itertools.count()

    def walk(self, root: Any) -> None:
        """Visit every node under ``root``."""
        broken = root.has_error
        stack: list[_Item] = [(root, root.type, None, None, None)]
        while stack:
            node, kind, pipe, owner, frame = stack.pop()
            if broken and (node.is_error or node.is_missing):
                self._unreadable(node)
            if kind == "command" or kind in _DECLARATIONS:
                created = self._simple(node, pipe, frame)
                if owner is not None:
                    owner.substituted.extend(c.found.name for c in created)
                owner, pipe = (created[0] if created else owner), None
            elif kind == "pipeline":
                if frame is not None:
                    frame.forks = True
                pid = next(self._pipelines)
                members = [c for c in node.children if c.is_named]
                stack.extend(
                    (c, c.type, (pid, i), owner, frame)
                    for i, c in reversed(list(enumerate(members)))
                )
                continue
            elif kind in ("command_substitution", "process_substitution"):
                pipe = None
            elif kind == "function_definition":
                name = node.child_by_field_name("name")
                frame = _Frame(text_of(name, self.source) if name is not None else "")
                self.frames.append(frame)
            elif kind in ("file_redirect", "heredoc_redirect"):
                self._redirect(node)
            for child in reversed(node.children):
                child_kind = child.type
                if not child.is_named:
                    if child_kind == "&" and frame is not None:
                        frame.forks = True
                elif child_kind not in _LEAVES or (broken and child.has_error):
                    stack.append((child, child_kind, pipe, owner, frame))

    def _unreadable(self, node: Any) -> None:
        if self._told_unreadable:
            return
        self._told_unreadable = True
        shown = text_of(node, self.source).strip()[:40]
        shown = shown or text_of(node.parent or node, self.source).strip()[:40]
        self.unknown.append(f"the shell cannot read the part near `{shown or 'the end'}`")

    def _simple(
        self, node: Any, pipe: tuple[int, int] | None, frame: _Frame | None
    ) -> list[_Command]:
        words: list[Word] = []
        if node.type in _DECLARATIONS:
            words = [Word(text_of(node.children[0], self.source))]
            words += [word(c, self.source) for c in node.named_children]
            return self._run(words, (), pipe, frame, "", False)
        assigned: list[str] = []
        groups: list[list[Any]] = []
        for child in node.named_children:
            if groups and continued(self.source, groups[-1][-1].end_byte, child.start_byte):
                groups[-1].append(child)  # ``tou\<new line>ch``: one word
            else:
                groups.append([child])
        for group in groups:
            value = glued([word(part, self.source) for part in group])
            if group[0].type == "variable_assignment" and not words:
                assigned.append(value.value)
            elif group[0].type not in ("file_redirect", "herestring_redirect"):
                words.append(value)
        if not words:
            return []
        return self._run(words, tuple(assigned), pipe, frame, "", False, self._stdin(node))

    def _stdin(self, node: Any) -> Word | None:
        """What a here-string, a here-document or ``< file`` gives the command as input;
        not literal when it is only known when the command runs."""
        for child in node.children:
            if child.type == "herestring_redirect" and child.named_children:
                return word(child.named_children[0], self.source)
        parent = node.parent
        if parent is None or parent.type != "redirected_statement":
            return None
        for redirect in parent.children:
            if redirect.type == "heredoc_redirect":
                start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
                body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
                quoted = start is not None and any(
                    q in text_of(start, self.source) for q in "'\"\\"
                )
                literal = quoted or body is None or not body.named_children
                return Word(text_of(body, self.source) if body else "", literal)
            if redirect.type == "file_redirect" and any(c.type == "<" for c in redirect.children):
                return Word(text_of(redirect, self.source), literal=False)
        return None

    def _run(
        self,
        words: list[Word],
        assigned: tuple[str, ...],
        pipe: tuple[int, int] | None,
        frame: _Frame | None,
        via: str,
        escalated: bool,
        stdin: Word | None = None,
    ) -> list[_Command]:
        written = " ".join([*assigned, *[w.value for w in words]])
        taken = unwrap(words)
        if taken.problem:
            self.unknown.append(taken.problem)
        head, args = taken.words[0], taken.words[1:]
        name = program_name(head.value) if head.literal and not head.pattern else ""
        if not name:
            how = "a pattern" if head.literal else "an expansion"
            self.unknown.append(
                f"the program's name `{head.value}` is {how}, known only when it runs"
            )
        escalated = escalated or taken.escalated
        found = SimpleCommand(
            name=name,
            argv=tuple([w.value for w in taken.words]),
            written=written,
            assignments=assigned,
            wrappers=tuple(taken.wrappers),
            escalated=escalated,
            via=via,
            literal=tuple([w.literal for w in taken.words]),
        )
        created = [_Command(found, pipe)]
        self.commands.append(created[0])
        if frame is not None and name == frame.name:
            frame.calls_itself = True
        if name not in _STARTS_OTHERS and not files.touches_files(name):
            return created  # most programs: nothing more to read
        escalated = escalated or name in ("su", "sg", "runuser")
        script = eval_script(args) if name == "eval" else shell_script(name, args)
        if script is not None:
            step = "eval" if name == "eval" else f"{name} -c"
            created += self._nested(script, written, _joined(via, step), escalated)
        elif reads_script_from_input(name, args):
            if stdin is not None and stdin.literal:
                created += self._nested(stdin, written, _joined(via, f"{name} <<"), escalated)
            else:  # a pipe, a file, or a redirection around it (``{ sh; } <<< …``)
                self.unknown.append(f"`{written}` runs the commands it reads from its input")
        if name == "hash" and any(a.value.startswith("-p") for a in args):
            self.unknown.append(f"`{written}` gives a program another name")
        if name in ("source", "."):
            self.unknown.append(f"`{written}` runs the commands of a file in this shell")
        for step, inner in inner_commands(name, args):
            created += self._run(inner, (), pipe, frame, _joined(via, step), escalated)
        for text in files.started_texts(name, args) if self.depth < MAX_DEPTH else ():
            created += self._started(text, _joined(via, name), escalated)
        self._files(name, args)
        return created

    def _started(self, text: str, via: str, escalated: bool) -> list[_Command]:
        """The programs a string in inline code would start, if it is a command line: only
        its commands are taken (a string that is not one is not a reason to ask)."""
        inner = self.nested(text, self.depth + 1)
        created = [
            _Command(replace(c, via=_joined(via, c.via), escalated=c.escalated or escalated))
            for c in inner.commands
            if c.name
        ]
        self.commands.extend(created)
        return created

    def _nested(self, script: Word, written: str, via: str, escalated: bool) -> list[_Command]:
        if not script.literal:
            self.unknown.append(f"`{written}` runs text that is known only when it runs")
            return []
        if self.depth >= MAX_DEPTH:
            self.unknown.append(f"`{written}` nests shells more than {MAX_DEPTH} deep")
            self.too_deep = True
            return []
        inner = self.nested(script.value, self.depth + 1)
        created = [
            _Command(
                replace(c, via=_joined(via, c.via), escalated=c.escalated or escalated),
                substituted=list(c.substituted),
            )
            for c in inner.commands
        ]
        self.commands.extend(created)
        self.writes.extend(inner.writes)
        self.reads.extend(inner.reads)
        self.searches.extend(inner.searches)
        self.directories.extend(inner.directories)
        self.unknown.extend(inner.unknown)
        self.unknown_reads.extend(inner.unknown_reads)
        self.too_deep |= inner.too_deep or not inner.parsed
        self.frames.extend(_Frame(name, True, True) for name in inner.self_forking)
        return created

    def _files(self, name: str, args: list[Word]) -> None:
        for target in files.writes(name, args):
            self._write(target)
        found, searched = files.reads(name, args)
        self.reads.extend(w.value for w in found if _named(w))
        self.searches.extend(w.value for w in searched if _named(w))
        self.unknown_reads.extend(
            f"`{name}` reads a file named by `{w.value}`"
            for w in (*found, *searched)
            if not _named(w) and w.value != "{}"
        )
        if name in ("cd", "pushd") and args and _named(args[-1]):
            here = args[-1].value
            if self.directories and not here.startswith(("/", "~", "$")):
                here = f"{self.directories[-1]}/{here}"
            self.directories.append(here)

    def _write(self, target: Word) -> None:
        if not target.literal:
            self.unknown.append(f"it writes a file named by `{target.value}`")
        elif target.value not in _QUIET and not target.value.startswith("/dev/fd/"):
            self.writes.append(target.value)

    def _redirect(self, node: Any) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None or destination.type == "process_substitution":
            return
        if node.type == "heredoc_redirect":
            return
        target = word(destination, self.source)
        if operator in _WRITING:
            if destination.type == "number" and operator in (">&", "<&"):
                return
            self._write(target)
        if operator in ("<", "<>") and target.literal:
            self.reads.append(target.value)

    def _upstream(self) -> dict[int, tuple[str, ...]]:
        """For each command (by position) in a pipeline, the different programs before it;
        at most `_PIPE_NAMES` of them, so a pipeline of 50,000 stays linear."""
        by_pipe: dict[int, list[tuple[int, int]]] = {}
        for position, c in enumerate(self.commands):
            if c.pipe is not None:
                by_pipe.setdefault(c.pipe[0], []).append((c.pipe[1], position))
        found: dict[int, tuple[str, ...]] = {}
        for members in by_pipe.values():
            members.sort()
            seen: dict[str, None] = {}
            before: tuple[str, ...] = ()
            waiting: list[str] = []
            last = 0
            for index, position in members:
                if index != last and waiting:
                    count = len(seen)
                    seen.update(dict.fromkeys(waiting[: _PIPE_NAMES - count]))
                    before = tuple(seen) if len(seen) != count else before
                    waiting = []
                last = index
                found[position] = before
                name = self.commands[position].found.name
                if name not in seen:
                    waiting.append(name)
            if len(seen) + len(waiting) > _PIPE_NAMES:
                self.unknown.append(f"a pipeline runs more than {_PIPE_NAMES} programs")
        return found

    def result(self) -> CommandAnalysis:
        """The analysis, frozen."""
        upstream = self._upstream()
        commands = []
        for position, c in enumerate(self.commands):
            found = c.found
            piped_from = upstream.get(position)
            if piped_from or c.substituted:
                # Not `dataclasses.replace`, which looks the fields up on every call.
                values = vars(found) | {"piped_from": piped_from or found.piped_from}
                if c.substituted:
                    values["substituted"] = tuple(dict.fromkeys(c.substituted))
                found = SimpleCommand(**values)
            commands.append(found)
        return CommandAnalysis(
            text=self.text,
            commands=tuple(commands),
            writes=tuple(dict.fromkeys(self.writes)),
            reads=tuple(dict.fromkeys(self.reads)),
            searches=tuple(dict.fromkeys(self.searches)),
            directories=tuple(dict.fromkeys(self.directories)),
            unknown=tuple(dict.fromkeys(self.unknown)),
            unknown_reads=tuple(dict.fromkeys(self.unknown_reads)),
            too_deep=self.too_deep,
            self_forking=tuple(
                dict.fromkeys(f.name for f in self.frames if f.calls_itself and f.forks)
            ),
        )


def _named(word: Word) -> bool:
    """Whether a file name is known: literal, or from the home directory (``$HOME/x``)."""
    if word.value == "{}":  # the file ``find -exec`` and ``xargs -I{}`` put there
        return False
    if word.literal:
        return True
    rest = word.value.removeprefix("${HOME}").removeprefix("$HOME")
    return rest != word.value and "$" not in rest and "`" not in rest


def _joined(via: str, step: str) -> str:
    return f"{via}/{step}" if via and step else via or step
