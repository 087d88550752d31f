"""The safety policy: a pure decision about commands that must never run.

`check_command` looks through quoting, extra whitespace, wrappers (``sudo``, ``env``,
``bash -c``) and command chains. It is deliberately conservative about a short list of
catastrophic actions; everything else is left to the approval mode and the OS sandbox
(`tools/guard/sandbox.py`), which is the real boundary: a denylist cannot see through
``$(...)``, base64 or a Python one-liner. Every check is linear in the command's length (no
regular expression here can backtrack), and commands longer than `MAX_COMMAND_CHARS` are
refused outright.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

_WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "command", "exec", "time", "nice", "ionice", "builtin"}
)
_WRAPPER_OPTIONS_WITH_VALUE = {
    "sudo": frozenset({"-u", "-g", "-U", "-C", "-D", "-p", "-h", "-r", "-t", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
}
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl"})
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
_REDIRECT_TO_DEVICE = re.compile(r">[ \t]*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)")
_PROCESS_SUBSTITUTION_DOWNLOAD = re.compile(r"<\([ \t]*(curl|wget)\b")
_COMMAND_SUBSTITUTION_DOWNLOAD = re.compile(r"\$\([ \t]*(curl|wget)\b")
_RUNS_TEXT = re.compile(r"\b(sh|bash|eval)\b")
_DOWNLOADERS = frozenset({"curl", "wget", "fetch"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "\n", "(", ")", "{", "}"})
_PIPES = frozenset({"|", "|&"})
_MAX_DEPTH = 8
"""How deep ``bash -c`` and ``eval`` are looked into."""

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


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to a rough split
        return command.replace('"', " ").replace("'", " ").split()


def _is_separator(token: str) -> bool:
    return token in _SEPARATORS or set(token) <= set(";&|()")


def _segments(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """Simple commands, each with whether its input is piped from the one before."""
    segments: list[tuple[list[str], bool]] = [([], False)]
    for token in tokens:
        if _is_separator(token):
            segments.append(([], token in _PIPES))
        else:
            segments[-1][0].append(token)
    return [(words, piped) for words, piped in segments if words]


def _has_fork_bomb(tokens: list[str]) -> bool:
    """A function that calls itself in the background or through a pipe (``:(){ :|:& };:``).

    One pass with a stack of the functions being defined, so nesting costs nothing extra.
    """
    frames: list[_Function] = []
    for i, token in enumerate(tokens):
        opens = (token == "(" and tokens[i + 1 : i + 2] == [")"]) or token == "()"
        if i > 0 and opens and not _is_separator(tokens[i - 1]):
            frames.append(_Function(tokens[i - 1]))
        elif token == "}" and frames:
            frame = frames.pop()
            if frame.calls_itself and frame.forks:
                return True
        elif frames:
            frame = frames[-1]
            frame.calls_itself |= token == frame.name
            frame.forks |= token in {"&", "|", "|&"}
    return False


@dataclass
class _Function:
    """A shell function being defined, as `_has_fork_bomb` tracks it."""

    name: str
    calls_itself: bool = False
    forks: bool = False


def _strip_wrappers(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        head = os.path.basename(words[i].lstrip("\\"))
        if head in _WRAPPERS:
            i += 1
            takes_value = _WRAPPER_OPTIONS_WITH_VALUE.get(head, frozenset())
            while i < len(words) and (words[i].startswith("-") or "=" in words[i]):
                i += 2 if words[i] in takes_value else 1  # options and env assignments
        elif "=" in head and not head.startswith("="):
            i += 1  # VAR=value prefix
        else:
            break
    return words[i:]


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


def _check_words(
    words: list[str], home: Path, workspace: Path | None, depth: int
) -> PolicyDecision:
    words = _strip_wrappers(words)
    if not words:
        return ALLOW
    name = os.path.basename(words[0].lstrip("\\"))
    args = words[1:]
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
    if name in _SHELLS and "-c" in args[:-1]:
        return _check(args[args.index("-c") + 1], home, workspace, depth + 1)
    if name == "eval":
        return _check(" ".join(args), home, workspace, depth + 1)
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
    return _check(command, home, workspace, 0)


def _check(command: str, home: Path, workspace: Path | None, depth: int) -> PolicyDecision:
    if depth > _MAX_DEPTH:
        return _refuse("commands nested this deep cannot be reviewed", "run the command directly")
    download = _PROCESS_SUBSTITUTION_DOWNLOAD.search(command)
    if download and _RUNS_TEXT.search(command, 0, download.start()):
        return _refuse(
            "piping a download into a shell runs unreviewed code",
            "download to a file, read it with read_file, then decide",
        )
    if _COMMAND_SUBSTITUTION_DOWNLOAD.search(command) and _RUNS_TEXT.search(command):
        return _refuse("running downloaded code", "download to a file and read it first")
    if _REDIRECT_TO_DEVICE.search(command):
        return _refuse("writing directly to a block device", "write to a regular file instead")
    tokens = _tokens(command)
    if _has_fork_bomb(tokens):
        return _refuse("a fork bomb", "run the program you need directly")
    downloading = False
    for words, piped in _segments(tokens):
        name = _command_name(words)
        if piped and downloading and name in _SHELLS:
            return _refuse(
                "piping a download into a shell runs unreviewed code",
                "download to a file, read it with read_file, then decide",
            )
        downloading = name in _DOWNLOADERS or (piped and downloading)
        decision = _check_words(words, home, workspace, depth)
        if not decision.allowed:
            return decision
    return ALLOW


def _command_name(words: list[str]) -> str:
    words = _strip_wrappers(words)
    return os.path.basename(words[0].lstrip("\\")) if words else ""
