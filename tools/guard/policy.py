"""The safety policy: a pure decision about commands that must never run.

`check_command` reads the command's one analysis (`tools.shell_reading`): every simple
command it runs, with quoting, wrappers (``sudo``, ``env``), nested shells (``bash -c``,
``eval``), substitutions and functions seen through, and the files it writes. It is
deliberately conservative about a short list of catastrophic actions; everything else is left
to the approval mode and the OS sandbox (`tools/guard/sandbox.py`), which is the real
boundary: a denylist cannot see through base64 or a Python one-liner. Commands longer than
`MAX_COMMAND_CHARS` are refused outright.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tools.shell_reading import CommandAnalysis, SimpleCommand, analyse

_RUNS_TEXT = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"}
    | {"eval", "source", "."}
)
"""Programs that run the text they are given (a download piped into one runs unread code)."""
_SYSTEM_DIRS = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib64",
        "/opt",
        "/proc",
        "/root",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
    }
)
_DISK_TOOLS = re.compile(r"^(mkfs(\..+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted|shred)$")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)")
_BLOCK_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})

MAX_COMMAND_CHARS = 128 * 1024
"""Longer commands are refused unread: the model should write a script file instead."""


@dataclass(frozen=True)
class PolicyDecision:
    """The policy's verdict: ``allowed``, or a ``reason`` and a ``hint`` for the model."""

    allowed: bool
    reason: str = ""
    hint: str = ""


ALLOW = PolicyDecision(True)


def _refuse(reason: str, hint: str) -> PolicyDecision:
    return PolicyDecision(False, reason, hint)


def _expand(word: str, home: Path, workspace: Path | None = None) -> str:
    for token in ("${HOME}", "$HOME"):
        word = word.replace(token, str(home))
    if workspace is not None:
        for token in ("${PWD}", "$PWD", "$(pwd)", "`pwd`"):
            word = word.replace(token, str(workspace))
    if word == "~" or word.startswith("~/"):
        word = str(home) + word[1:]
    return word


def _without_globs(target: str) -> str:
    """``target`` normalised (``/./``, ``..``, ``//``) with trailing ``/*`` and ``/.`` removed."""
    parts = [p for p in target.split("/") if p not in {"", "."}]
    while parts and parts[-1] == "*":
        parts.pop()
    cleaned = "/".join(parts)
    if target.startswith("/"):
        return os.path.normpath("/" + cleaned)
    return os.path.normpath(cleaned) if cleaned else "."


def _is_precious(target: str, home: Path, workspace: Path | None, *, relative: bool = True) -> bool:
    """Whether deleting ``target`` recursively would destroy a system, a home or the repo."""
    cleaned = _without_globs(target)
    if relative and (cleaned in {"*", ".", ".."} or cleaned.startswith("../")):
        return True
    if cleaned in _SYSTEM_DIRS or cleaned.startswith("/*"):
        return True
    if workspace is not None and not cleaned.startswith("/"):
        cleaned = os.path.normpath(workspace / cleaned)
    precious = {str(home), str(home.parent)}
    if workspace is not None:
        precious |= {str(workspace), str(workspace.parent)}
    return os.path.normpath(cleaned) in precious


def _check_rm(args: list[str], home: Path, workspace: Path | None) -> PolicyDecision:
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-") and not a.startswith("--"))
    recursive = "r" in flags.lower() or "--recursive" in args
    targets = [_expand(a, home, workspace) for a in args if not a.startswith("-")]
    if recursive and any(_is_precious(t, home, workspace) for t in targets):
        return _refuse(
            "recursive rm of the filesystem root, a home directory or the whole workspace",
            "delete the specific files or subdirectories you mean, by relative path",
        )
    return ALLOW


def _check_simple(command: SimpleCommand, home: Path, workspace: Path | None) -> PolicyDecision:
    name, args = command.name, list(command.argv[1:])
    if name in _RUNS_TEXT and any(
        program in _DOWNLOADERS for program in (*command.piped_from, *command.substituted)
    ):
        return _refuse(
            "piping a download into a shell runs unreviewed code",
            "download to a file, read it with read_file, then decide",
        )
    if name == "rm":
        return _check_rm(args, home, workspace)
    if _DISK_TOOLS.match(name):
        return _refuse(f"{name} formats or wipes disks", "do not touch disks or partitions")
    if name == "dd" and any(a.startswith("of=") and _DEVICE.match(a[3:]) for a in args):
        return _refuse("dd writing to a block device", "write to a regular file instead")
    if name in _POWER:
        return _refuse(f"{name} stops the machine", "there is no need to restart the machine")
    recursive = any(a in {"-R", "--recursive"} for a in args)
    if name in {"chmod", "chown", "chgrp"} and recursive:
        targets = [_expand(a, home) for a in args if a.startswith(("/", "~", "$"))]
        if any(_is_precious(t, home, None, relative=False) for t in targets):
            return _refuse(
                f"recursive {name} of a system or home directory", "change specific files"
            )
    if (
        name == "find"
        and "-delete" in args
        and args
        and _is_precious(_expand(args[0], home), home, None, relative=False)
    ):
        return _refuse("find -delete over a system or home directory", "narrow the path")
    return ALLOW


def check_command(command: str, *, home: Path, workspace: Path | None = None) -> PolicyDecision:
    """Decide whether ``command`` may run at all (approval is a separate question).

    Args:
        command: The shell text the model asked to run.
        home: The person's home directory (``$HOME`` and ``~`` expand to it).
        workspace: The workspace root; deleting it wholesale is refused too.
    """
    if len(command) > MAX_COMMAND_CHARS:
        return _refuse(
            f"the command is {len(command):,} characters long, more than can be reviewed",
            "write the script to a file with write_file, then run that file",
        )
    return _check(analyse(command), home, workspace)


def _check(found: CommandAnalysis, home: Path, workspace: Path | None) -> PolicyDecision:
    if not found.parsed:
        return _refuse(
            f"the command cannot be reviewed: {found.unknown[0]}",
            "write the script to a file with write_file, then run that file",
        )
    if found.too_deep:
        return _refuse("commands nested this deep cannot be reviewed", "run the command directly")
    if found.self_forking:
        return _refuse("a fork bomb", "run the program you need directly")
    if any(_BLOCK_DEVICE.match(target) for target in found.writes):
        return _refuse("writing directly to a block device", "write to a regular file instead")
    for command in found.commands:
        decision = _check_simple(command, home, workspace)
        if not decision.allowed:
            return decision
    return ALLOW
