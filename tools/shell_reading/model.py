"""What the analysis of one shell command says: the commands it runs, the files it touches,
and the parts that cannot be known before it runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class SimpleCommand(NamedTuple):
    """One program the command will run, with its wrappers taken off.

    ``sudo -u x env A=1 timeout 5 /usr/bin/git push`` is ``name="git"``, ``argv=("/usr/bin/git",
    "push")``, ``wrappers=("sudo", "env", "timeout")``, ``escalated=True``, and ``written`` the
    whole simple command with its quoting removed.

    A named tuple, not a frozen dataclass: a 100 kB script has thousands of them, and a tuple
    is made in a third of the time and a quarter of the memory.
    """

    name: str
    """The program's name (``/usr/bin/x`` is ``x``); empty when it comes from an expansion."""
    argv: tuple[str, ...]
    """The program as written, then its arguments, quoting removed."""
    written: str
    """The simple command as written (assignments and wrappers too), quoting removed."""
    assignments: tuple[str, ...] = ()
    """The ``NAME=value`` words before it, as written."""
    wrappers: tuple[str, ...] = ()
    escalated: bool = False
    """Run through ``sudo``, ``doas`` or ``su``."""
    via: str = ""
    """What runs it when the shell does not directly: ``bash -c``, ``eval``, ``xargs``,
    ``find -exec``..., outermost first, separated by ``/``."""
    piped_from: tuple[str, ...] = ()
    """The names of the commands before it in its pipeline (its input comes from them); a
    pipeline inside a member of another is part of it (``curl x | (cat | sh)``)."""
    substituted: tuple[str, ...] = ()
    """The names of the commands run inside its words (``$(...)``, backticks, ``<(...)``)."""
    literal: tuple[bool, ...] = ()
    """For each word of ``argv``: whether it is known before the command runs."""

    @property
    def path_qualified(self) -> bool:
        """Whether the program was named by a path (``./ls``, ``bin/grep``, ``/usr/bin/x``)."""
        return "/" in self.argv[0] if self.argv else False

    @property
    def unwrapped(self) -> str:
        """The program's name and its arguments: ``git push`` for the example above."""
        return " ".join((self.name, *self.argv[1:])) if self.name else ""


@dataclass(frozen=True)
class CommandAnalysis:
    """One reading of a shell command, shared by every decision about it.

    ``commands`` lists every program it runs (nested shells, substitutions, function bodies,
    ``xargs`` and ``find -exec`` included); ``writes`` the files it writes (redirections,
    ``tee``, ``dd of=``, ``cp``/``mv`` destinations, ``sort -o``...; ``/dev/null`` aside);
    ``reads`` the files its reading programs name; ``searches`` the directories it reads
    through (``grep -r``, ``rg``); ``unknown`` why any part cannot be known before it runs.
    """

    text: str
    commands: tuple[SimpleCommand, ...] = ()
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    """Where its ``cd``/``pushd`` commands go, each from the one before (``cd a && cd b`` is
    ``a``, ``a/b``): relative names may be taken from any of them."""
    unknown: tuple[str, ...] = ()
    """One reason per part that cannot be known, each naming the part."""
    unknown_reads: tuple[str, ...] = ()
    """Files a reading program is given by a name known only when it runs (``cat $f``)."""
    self_forking: tuple[str, ...] = ()
    """Functions that call themselves in a pipeline or in the background (a fork bomb)."""
    too_deep: bool = False
    """Shells nest deeper than the analysis reads (`MAX_DEPTH`)."""
    parsed: bool = True
    """False when the text was not parsed at all (too long, too garbled): nothing is known."""

    @property
    def knowable(self) -> bool:
        """Whether everything the command runs and writes is known before it runs."""
        return not self.unknown

    def summary(self) -> str:
        """``runs: git, grep · writes: out.txt``, each name once, in order of appearance, then
        what runs as root and what cannot be read."""
        runs = list(dict.fromkeys(c.name or "?" for c in self.commands))
        parts = [f"runs: {', '.join(runs)}"] if runs else []
        if self.writes:
            parts.append(f"writes: {', '.join(self.writes)}")
        root = list(dict.fromkeys(c.name or "?" for c in self.commands if c.escalated))
        if root:
            parts.append(f"as root: {', '.join(root)}")
        if self.unknown:
            parts.append(f"cannot be read before it runs: {self.unknown[0]}")
        return " · ".join(parts)
