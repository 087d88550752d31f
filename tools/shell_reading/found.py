"""What a walk has found so far, and the frozen `CommandAnalysis` made from it at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools.shell_reading.model import CommandAnalysis, SimpleCommand

_PIPE_NAMES = 64


@dataclass
class Frame:
    """A function being defined: whether its body calls it, and whether it forks."""

    name: str
    calls_itself: bool = False
    forks: bool = False


class Record:
    """A simple command while the walk still adds to it: its `SimpleCommand` fields, where it
    stands in a pipeline, and the names of what its words substitute."""

    __slots__ = ("fields", "pipe", "substituted")

    def __init__(
        self,
        fields: dict[str, Any],
        pipe: tuple[int, int] | None = None,
        substituted: list[str] | None = None,
    ) -> None:
        self.fields = fields
        self.pipe = pipe
        self.substituted = substituted if substituted is not None else []

    @property
    def name(self) -> str:
        """The program's name (empty when it comes from an expansion)."""
        name: str = self.fields["name"]
        return name


def simple_command(fields: dict[str, Any]) -> SimpleCommand:
    """A `SimpleCommand` whose attributes are ``fields`` (every field, a dictionary of its
    own). A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``:
    1.9 µs for ten fields against 0.3 µs for this, and a 100 kB script has thousands of
    commands."""
    command: SimpleCommand = object.__new__(SimpleCommand)
    object.__setattr__(command, "__dict__", fields)
    return command


@dataclass
class Found:
    """Everything one walk has found, in the order the shell meets it."""

    commands: list[Record] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    unknown_reads: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    too_deep: bool = False

    def absorb(self, inner: CommandAnalysis) -> None:
        """Take what a nested script writes, reads and cannot know (not its commands)."""
        self.writes.extend(inner.writes)
        self.reads.extend(inner.reads)
        self.searches.extend(inner.searches)
        self.directories.extend(inner.directories)
        self.unknown.extend(inner.unknown)
        self.unknown_reads.extend(inner.unknown_reads)
        self.too_deep |= inner.too_deep or not inner.parsed
        self.frames.extend(Frame(name, True, True) for name in inner.self_forking)

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
                name = self.commands[position].name
                if name not in seen:
                    waiting.append(name)
            if len(seen) + len(waiting) > _PIPE_NAMES:
                self.unknown.append(f"a pipeline runs more than {_PIPE_NAMES} programs")
        return found

    def result(self, text: str) -> CommandAnalysis:
        """The analysis of ``text``, frozen."""
        upstream = self._upstream()
        commands = []
        for position, c in enumerate(self.commands):
            fields = c.fields
            piped_from = upstream.get(position)
            if piped_from or c.substituted:  # each record's fields are its own: no copy
                if piped_from:
                    fields["piped_from"] = piped_from
                if c.substituted:
                    fields["substituted"] = tuple(dict.fromkeys(c.substituted))
            commands.append(simple_command(fields))
        return CommandAnalysis(
            text=text,
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
