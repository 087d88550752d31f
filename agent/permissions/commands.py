"""What a command touches, as the permission rules check it: the texts its simple commands
are matched by, and the files it writes, reads and searches, as absolute paths.

Everything here comes from the one analysis of the command (`tools.shell_reading`).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from tools.shell_reading import CommandAnalysis, SimpleCommand, analyse

GLOB_LIMIT = 200
"""How many files one pattern (``cat .e*``) is expanded to for the check."""
SEARCH_LIMIT = 20_000
"""How many entries of a searched directory (``grep -r``) are looked at; beyond, the search
counts as reaching every file a rule names."""


@dataclass(frozen=True)
class CommandTargets:
    """A command's analysis and the files it names, resolved against the workspace."""

    analysis: CommandAnalysis
    writes: tuple[Path, ...]
    reads: tuple[Path, ...]
    searches: tuple[Path, ...]


def targets(command: str, workspace: Path, home: Path, *, reads: bool = True) -> CommandTargets:
    """The analysis of ``command`` and its files, relative names taken from ``workspace``;
    without ``reads`` (no Read rule to check), the files it reads are left out, unresolved
    and unexpanded."""
    found = analyse(command)
    bases = [workspace]
    for directory in found.directories:  # ``cd sub && cat ../.env``
        base = _absolute(directory, workspace, home)
        if base is not None:
            bases.append(base)
    return CommandTargets(
        found,
        _paths(found.writes, bases, home, expand=False),
        _paths(found.reads, bases, home, expand=True) if reads else (),
        _paths(found.searches, bases, home, expand=False) if reads else (),
    )


def deny_forms(command: SimpleCommand) -> tuple[str, ...]:
    """The texts a deny or ask rule is matched against: as written, and without wrappers
    with the program's name resolved (``sudo /usr/bin/git push`` is also ``git push``)."""
    forms = [command.written, " ".join(command.argv)]
    if command.unwrapped:
        forms.append(command.unwrapped)
    return tuple(dict.fromkeys(forms))


def _paths(
    values: tuple[str, ...], bases: list[Path], home: Path, *, expand: bool
) -> tuple[Path, ...]:
    found: dict[Path, None] = {}
    for value, base in ((value, base) for value in values for base in bases):
        path = _absolute(value, base, home)
        if path is None:
            continue
        found[path] = None
        if expand and any(char in value for char in "*?["):
            for match in islice(glob.iglob(str(path), include_hidden=True), GLOB_LIMIT):
                found[Path(match)] = None
        try:
            real = path.resolve()  # a link to a denied file is the denied file
        except (OSError, RuntimeError):
            continue
        found[real] = None
    return tuple(found)


def _absolute(value: str, workspace: Path, home: Path) -> Path | None:
    for prefix in ("${HOME}", "$HOME", "~"):
        if value == prefix or value.startswith(prefix + "/"):
            value = str(home) + value[len(prefix) :]
            break
    if not value or "\0" in value or "$" in value:
        return None
    return Path(os.path.normpath(workspace / value))


def inside(directory: Path) -> tuple[list[Path], bool]:
    """``directory`` and the entries under it (at most `SEARCH_LIMIT`), and whether that is
    all of them."""
    found = [directory]
    if not directory.is_dir():
        return found, True
    for root, dirs, names in os.walk(directory):
        for name in (*dirs, *names):
            if len(found) > SEARCH_LIMIT:
                return found, False
            found.append(Path(root, name))
    return found, True
