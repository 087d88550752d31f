"""One simple command's words read into what it runs: wrappers taken off, nested shells,
``eval``, ``xargs`` and ``find -exec`` followed, and the files it names recorded."""

from __future__ import annotations

from collections.abc import Callable

from tools.shell_reading import files
from tools.shell_reading.found import Found, Frame, Pipe
from tools.shell_reading.model import CommandAnalysis, SimpleCommand
from tools.shell_reading.plain import FILES, MOVES, PlainCommand, quiet, read_further
from tools.shell_reading.words import Word
from tools.shell_reading.wrappers import (
    RUNS_TEXT,
    WRAPPERS,
    eval_script,
    inner_commands,
    program_name,
    reads_script_from_input,
    shell_script,
    unwrap,
)

MAX_DEPTH = 8
"""How many shells deep (``bash -c``, ``eval``) a command is read; deeper is not knowable."""
MAX_DIRECTORIES = 64
"""How many ``cd``s are followed. Each relative one is named from the one before, so their
names grow with their number: 8,000 ``cd a`` (40 kB) made 64 MB of names, 50,000 would not
fit in memory."""
Nested = Callable[[str, int], CommandAnalysis]
"""Reads a nested script at a depth (the analysis itself, passed in to avoid a cycle)."""
Stdin = Callable[[], "Word | None"]
"""What a here-string, a here-document or ``< file`` gives the command as input; asked only
of a shell that reads its commands from its input."""


class CommandReader:
    """Adds each simple command of one script, and what it leads to, to a `Found`."""

    def __init__(self, found: Found, depth: int, nested: Nested) -> None:
        self.found = found
        self.depth = depth
        self.nested = nested
        self._moved_too_often = False

    def run(
        self,
        words: list[Word],
        assigned: tuple[str, ...],
        pipe: Pipe | None,
        frame: Frame | None,
        via: str,
        escalated: bool,
        stdin: Stdin | None = None,
        substituted: tuple[str, ...] = (),
    ) -> list[SimpleCommand]:
        """Record the command of ``words`` (and what it runs); the records made, its own first
        (with the programs ``substituted`` in its words, when they are known before)."""
        found = self.found
        values, literal, _ = zip(*words, strict=True)  # words is never empty
        written = " ".join((*assigned, *values) if assigned else values)
        head = words[0]
        wrappers: tuple[str, ...] = ()
        name = program_name(head.value) if head.literal else ""
        if name in WRAPPERS:
            taken = unwrap(words)
            if taken.problem:
                found.unknown.append(taken.problem)
            words, wrappers = taken.words, tuple(taken.wrappers)
            values, literal, _ = zip(*words, strict=True)
            escalated = escalated or taken.escalated
            head = words[0]
            name = program_name(head.value) if head.literal else ""
        args = words[1:]
        if head.pattern:
            name = ""
        if not name:
            how = "a pattern" if head.literal else "an expansion"
            found.unknown.append(
                f"the program's name `{head.value}` is {how}, known only when it runs"
            )
        record = found.add(
            name, values, written, assigned, wrappers, escalated, via, literal, pipe, substituted
        )
        created = [record]
        if frame is not None and name == frame.name:
            frame.calls_itself = True
        if not read_further(name):
            return created  # most programs: nothing more to read
        escalated = escalated or name in ("su", "sg", "runuser")
        if name in RUNS_TEXT:
            created += self._scripted(name, args, written, via, escalated, stdin)
        if name == "hash" and any(a.value.startswith("-p") for a in args):
            found.unknown.append(f"`{written}` gives a program another name")
        if name in ("source", "."):
            found.unknown.append(f"`{written}` runs the commands of a file in this shell")
        if name in ("xargs", "find"):
            for step, inner in inner_commands(name, args):
                created += self.run(inner, (), pipe, frame, _joined(via, step), escalated)
        if files.touches_files(name):
            for text in files.started_texts(name, args) if self.depth < MAX_DEPTH else ():
                created += self._started(text, _joined(via, name), escalated)
            self._files(name, args)
        elif name in ("cd", "pushd"):
            self._moved(args)
        return created

    def _scripted(
        self,
        name: str,
        args: list[Word],
        written: str,
        via: str,
        escalated: bool,
        stdin: Stdin | None,
    ) -> list[SimpleCommand]:
        """The commands of the script a shell (or ``eval``, ``su -c``, ``watch``...) runs."""
        script = eval_script(args) if name == "eval" else shell_script(name, args)
        if script is not None:
            step = "eval" if name == "eval" else f"{name} -c"
            return self._nested(script, written, _joined(via, step), escalated)
        if reads_script_from_input(name, args):
            given = stdin() if stdin is not None else None
            if given is not None and given.literal:
                return self._nested(given, written, _joined(via, f"{name} <<"), escalated)
            # a pipe, a file, or a redirection around it (``{ sh; } <<< …``)
            self.found.unknown.append(f"`{written}` runs the commands it reads from its input")
        return []

    def run_plain(self, plan: PlainCommand, pipe: Pipe | None, frame: Frame | None) -> str:
        """`run` for a command of plain words (`read_plain`) whose program is not a wrapper
        and runs no text or other program (its step is not `GENERAL`): the program's name."""
        found = self.found
        record = plan.alone
        name = record.name
        if pipe is None:
            found.commands.append(record)
        else:
            found.add(name, record.argv, record.written, (), (), False, "", record.literal, pipe)
        if frame is not None and name == frame.name:
            frame.calls_itself = True
        step = plan.step
        if step == MOVES:
            if len(record.argv) > 1:
                self._went(record.argv[-1])
        elif step == FILES:
            found.writes.extend(plan.writes)
            found.reads.extend(plan.reads)
            found.searches.extend(plan.searches)
        return name

    def _started(self, text: str, via: str, escalated: bool) -> list[SimpleCommand]:
        """The programs a string in inline code would start, if it is a command line: only
        its commands are taken (a string that is not one is not a reason to ask)."""
        inner = self.nested(text, self.depth + 1)
        created = [
            c._replace(via=_joined(via, c.via), escalated=c.escalated or escalated)
            for c in inner.commands
            if c.name
        ]
        self.found.commands.extend(created)
        return created

    def _nested(self, script: Word, written: str, via: str, escalated: bool) -> list[SimpleCommand]:
        found = self.found
        if not script.literal:
            found.unknown.append(f"`{written}` runs text that is known only when it runs")
            return []
        if self.depth >= MAX_DEPTH:
            found.unknown.append(f"`{written}` nests shells more than {MAX_DEPTH} deep")
            found.too_deep = True
            return []
        inner = self.nested(script.value, self.depth + 1)
        created = [
            c._replace(via=_joined(via, c.via), escalated=c.escalated or escalated)
            for c in inner.commands
        ]
        found.commands.extend(created)
        found.absorb(inner)
        return created

    def _files(self, name: str, args: list[Word]) -> None:
        found = self.found
        for target in files.writes(name, args):
            self.write(target)
        reads, searched = files.reads(name, args)
        for named, words in ((found.reads, reads), (found.searches, searched)):
            for w in words:
                if _named(w):
                    named.append(w.value)
                elif w.value != "{}":
                    found.unknown_reads.append(f"`{name}` reads a file named by `{w.value}`")

    def _moved(self, args: list[Word]) -> None:
        """Where a ``cd`` goes, if its name is known."""
        if args and _named(args[-1]):
            self._went(args[-1].value)

    def _went(self, here: str) -> None:
        """A ``cd`` to ``here``, named from where the ones before it went."""
        found = self.found
        if len(found.directories) >= MAX_DIRECTORIES:
            if not self._moved_too_often:  # said once (a long script can have thousands)
                self._moved_too_often = True
                found.unknown.append(f"it changes directory more than {MAX_DIRECTORIES} times")
            return
        if found.directories and not here.startswith(("/", "~", "$")):
            here = f"{found.directories[-1]}/{here}"
        found.directories.append(here)

    def write(self, target: Word) -> None:
        """Record that the command writes the file ``target`` names."""
        if not target.literal:
            self.found.unknown.append(f"it writes a file named by `{target.value}`")
        elif not quiet(target.value):
            self.found.writes.append(target.value)


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
