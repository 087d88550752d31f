"""What a walk has found so far, and the frozen `CommandAnalysis` made from it at the end."""

from __future__ import annotations

from dataclasses import dataclass, field

from tools.shell_reading.model import CommandAnalysis, SimpleCommand

_PIPE_NAMES = 64

Pipe = tuple["Pipeline", tuple[int, ...]]
"""Where a command stands in a pipeline: the pipeline, and the member's place in it. A
pipeline inside a member of another is part of that one, its members placed under the
member (``curl x | (cat | sh)``: ``sh`` is at ``(1, 1)``, after ``curl`` at ``(0,)``), so
what a nested one runs is seen fed by what comes before it, and feeding what comes after."""


@dataclass
class Frame:
    """A function being defined: whether its body calls it, and whether it forks."""

    name: str
    calls_itself: bool = False
    forks: bool = False


class Pipeline:
    """The programs of one pipeline met so far, in the order the walk meets them: each member
    (and all it runs) before the next."""

    __slots__ = ("at", "seen", "upstream", "waiting")

    def __init__(self) -> None:
        self.at: tuple[int, ...] = ()
        self.seen: dict[str, None] = {}
        """The different programs of the members before `at`, at most `_PIPE_NAMES`."""
        self.waiting: list[str] = []
        """Those of member `at`, not yet in `seen`."""
        self.upstream: tuple[str, ...] = ()

    def before(self, index: tuple[int, ...], name: str) -> tuple[str, ...]:
        """The programs met before member ``index``, for a command ``name`` standing there
        (in the order the walk meets them: each member, and all it runs, before the next)."""
        waiting, seen = self.waiting, self.seen
        if waiting and index != self.at:
            count = len(seen)
            for earlier in waiting[: _PIPE_NAMES - count]:
                seen[earlier] = None
            if len(seen) != count:
                self.upstream = tuple(seen)
            waiting.clear()
        self.at = index
        if name not in seen:
            waiting.append(name)
        return self.upstream

    @property
    def too_long(self) -> bool:
        """Whether it runs more programs than are named (a pipeline of 50,000 stays linear)."""
        return len(self.seen) + len(self.waiting) > _PIPE_NAMES


_new = tuple.__new__
_SUBSTITUTED = SimpleCommand._fields.index("substituted")


@dataclass
class Found:
    """Everything one walk has found, in the order the shell meets it."""

    commands: list[SimpleCommand] = field(default_factory=list)
    """Made as they are found, each fed by the programs before it in its pipeline; those
    whose words run others get their names at the end (`substituting`)."""
    pipelines: list[Pipeline] = field(default_factory=list)
    """The pipelines met so far."""
    substituting: dict[int, list[str]] = field(default_factory=dict)
    """By place in `commands`: the commands whose words run others, and those others' names."""
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    unknown_reads: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    too_deep: bool = False

    def add(
        self,
        name: str,
        argv: tuple[str, ...],
        written: str,
        assignments: tuple[str, ...],
        wrappers: tuple[str, ...],
        escalated: bool,
        via: str,
        literal: tuple[bool, ...],
        pipe: Pipe | None,
        substituted: tuple[str, ...] = (),
    ) -> SimpleCommand:
        """Record a command (the fields of `SimpleCommand`), standing at ``pipe`` in a
        pipeline."""
        piped_from = pipe[0].before(pipe[1], name) if pipe is not None else ()
        # tuple.__new__ skips the named tuple's own __new__, a Python function of ten arguments
        command: SimpleCommand = _new(
            SimpleCommand,
            (
                name,
                argv,
                written,
                assignments,
                wrappers,
                escalated,
                via,
                piped_from,
                substituted,
                literal,
            ),
        )
        self.commands.append(command)
        return command

    def pipeline(self) -> Pipeline:
        """A new pipeline."""
        new = Pipeline()
        self.pipelines.append(new)
        return new

    def substitute(self, owner: int, names: list[str]) -> None:
        """Record that the words of the command at ``owner`` in `commands` run the programs
        ``names``."""
        if names:
            known = self.substituting.get(owner)
            if known is None:
                self.substituting[owner] = names
            else:
                known += names

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

    def result(self, text: str) -> CommandAnalysis:
        """The analysis of ``text``, frozen."""
        commands = self.commands
        if any(p.too_long for p in self.pipelines):
            self.unknown.append(f"a pipeline runs more than {_PIPE_NAMES} programs")
        for position, substituted in self.substituting.items():
            command = commands[position]
            names = tuple(dict.fromkeys(substituted))
            # as command._replace(substituted=names), without its Python-level map
            fields = (*command[:_SUBSTITUTED], names, *command[_SUBSTITUTED + 1 :])
            commands[position] = _new(SimpleCommand, fields)
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
