"""The safety policy: a pure decision about commands that must never run.

`check_command` looks through quoting, extra whitespace, wrappers (``sudo``, ``env``,
``bash -c``) and command chains. It is deliberately conservative about a short list of
catastrophic actions; everything else is left to the approval mode.
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
_FORK_BOMB = re.compile(r"(\S+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&")
_REDIRECT_TO_DEVICE = re.compile(r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)")
_PIPE_TO_SHELL = re.compile(
    r"\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(env\s+)?\S*\b(sh|bash|zsh|dash|ksh|python3?|perl)\b"
)
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "\n", "(", ")", "{", "}"})


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


def _segments(tokens: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|()"):
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _strip_wrappers(words: list[str]) -> list[str]:
    words = list(words)
    while words:
        head = os.path.basename(words[0].lstrip("\\"))
        if head in _WRAPPERS:
            words = words[1:]
            takes_value = _WRAPPER_OPTIONS_WITH_VALUE.get(head, frozenset())
            while words and (words[0].startswith("-") or "=" in words[0]):
                option = words.pop(0)  # wrapper options and env assignments
                if option in takes_value and words:
                    words.pop(0)
        elif "=" in head and not head.startswith("="):
            words = words[1:]  # VAR=value prefix
        else:
            break
    return words


def _expand(word: str, home: Path) -> str:
    for token in ("${HOME}", "$HOME"):
        word = word.replace(token, str(home))
    if word == "~" or word.startswith("~/"):
        word = str(home) + word[1:]
    return word


def _is_precious(target: str, home: Path, workspace: Path | None, *, relative: bool = True) -> bool:
    """Whether deleting ``target`` recursively would destroy a system, a home or the repo."""
    cleaned = re.sub(r"/+", "/", target)
    cleaned = re.sub(r"(/\*|/\.)+$", "", cleaned).rstrip("/") or "/"
    if relative and cleaned in {"*", ".", ".."}:
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
    targets = [_expand(a, home) for a in args if not a.startswith("-")]
    if recursive and any(_is_precious(t, home, workspace) for t in targets):
        return _refuse(
            "recursive rm of the filesystem root, a home directory or the whole workspace",
            "delete the specific files or subdirectories you mean, by relative path",
        )
    return ALLOW


def _check_words(words: list[str], home: Path, workspace: Path | None) -> PolicyDecision:
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
        return check_command(args[args.index("-c") + 1], home=home, workspace=workspace)
    if name == "eval":
        return check_command(" ".join(args), home=home, workspace=workspace)
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
    flat = " ".join(command.split())
    if _FORK_BOMB.search(flat):
        return _refuse("a fork bomb", "run the program you need directly")
    if _PIPE_TO_SHELL.search(flat) or re.search(r"\b(sh|bash)\b.*<\(\s*(curl|wget)", flat):
        return _refuse(
            "piping a download into a shell runs unreviewed code",
            "download to a file, read it with read_file, then decide",
        )
    if re.search(r"\$\(\s*(curl|wget)\b", flat) and re.search(r"\b(sh|bash|eval)\b", flat):
        return _refuse("running downloaded code", "download to a file and read it first")
    if _REDIRECT_TO_DEVICE.search(flat):
        return _refuse("writing directly to a block device", "write to a regular file instead")
    for words in _segments(_tokens(command)):
        decision = _check_words(words, home, workspace)
        if not decision.allowed:
            return decision
    return ALLOW
