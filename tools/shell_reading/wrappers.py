"""Programs that run other programs: wrappers taken off, nested shells and ``xargs`` /
``find -exec`` commands found, each from its argument words."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from tools.shell_reading.words import Word


@dataclass(frozen=True)
class _Wrapper:
    """How a wrapper's options read: which take a value, and how many operands precede the
    command (``timeout 5 cmd``)."""

    valued: frozenset[str] = frozenset()
    operands: int = 0
    escalates: bool = False
    assignments: bool = False
    """Whether ``NAME=value`` words may precede the command (``env``)."""
    no_command_flags: frozenset[str] = field(default_factory=frozenset)


WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(frozenset({"-u", "--unset", "-C", "--chdir"}), assignments=True),
    "command": _Wrapper(),
    "builtin": _Wrapper(),
    "exec": _Wrapper(frozenset({"-a"})),
    "nice": _Wrapper(frozenset({"-n", "--adjustment"})),
    "nohup": _Wrapper(),
    "timeout": _Wrapper(frozenset({"-s", "--signal", "-k", "--kill-after"}), operands=1),
    "time": _Wrapper(frozenset({"-f", "--format", "-o", "--output"})),
    "stdbuf": _Wrapper(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "ionice": _Wrapper(frozenset({"-c", "--class", "-n", "--classdata"})),
    "setsid": _Wrapper(),
    "coproc": _Wrapper(),
    "unbuffer": _Wrapper(),
    "chronic": _Wrapper(),
    "sudo": _Wrapper(
        frozenset({"-u", "-g", "-U", "-C", "-D", "-p", "-h", "-r", "-t", "-T", "-R"})
        | frozenset({"--user", "--group", "--other-user", "--close-from", "--chdir"})
        | frozenset({"--prompt", "--host", "--role", "--type", "--command-timeout"}),
        escalates=True,
        assignments=True,
    ),
    "doas": _Wrapper(frozenset({"-u", "-C"}), escalates=True),
    "runuser": _Wrapper(frozenset({"-u", "--user", "-g", "--group"}), escalates=True),
    "chroot": _Wrapper(frozenset({"--userspec", "--groups"}), operands=1, escalates=True),
    "taskset": _Wrapper(operands=1),
    "chrt": _Wrapper(operands=1),
    "flock": _Wrapper(frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), operands=1),
    "strace": _Wrapper(frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-X"})),
    "ltrace": _Wrapper(frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a"})),
    "unshare": _Wrapper(),
    "setpriv": _Wrapper(),
    "nsenter": _Wrapper(frozenset({"-t", "--target", "-S", "-G"})),
    "firejail": _Wrapper(),
    "xvfb-run": _Wrapper(frozenset({"-n", "-s", "-f", "-e", "-p", "-w"})),
    "catchsegv": _Wrapper(),
    "dbus-run-session": _Wrapper(),
    "valgrind": _Wrapper(),
    "systemd-run": _Wrapper(frozenset({"-p", "--property", "-u", "--unit", "-E"})),
    "busybox": _Wrapper(),  # ``busybox touch x`` runs its applet ``touch``
    "toybox": _Wrapper(),
}
_LOOKS_UP = frozenset({"-v", "-V"})
"""``command -v x`` names ``x`` without running it."""
_SCRIPT_OPTIONS = {
    "su": ("-c", "--command"),
    "runuser": ("-c", "--command"),
    "script": ("-c", "--command"),
    "flock": ("-c", "--command"),
    "sg": ("-c", "--command"),
}
"""Programs that run the text given to an option with ``sh -c``."""
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
RUNS_TEXT = SHELLS | frozenset(_SCRIPT_OPTIONS) | {"eval", "trap", "alias", "watch"}
"""Every program `shell_script`, `eval_script` or `reads_script_from_input` finds a script of."""
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_XARGS_VALUED = frozenset(
    {"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args"}
    | {"-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass
class Unwrapped:
    """A command's words with its wrappers taken off."""

    words: list[Word]
    wrappers: list[str] = field(default_factory=list)
    escalated: bool = False
    problem: str = ""
    """Why the command inside could not be read (``env -S`` with an expansion)."""


def program_name(value: str) -> str:
    """``/usr/bin/x`` is ``x``."""
    return value.rpartition("/")[2] or value


def _is_assignment(value: str) -> bool:
    name, equals, _ = value.partition("=")
    return bool(equals) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


def _options(
    words: list[Word], valued: frozenset[str], start: int = 0, *, dash: bool = False
) -> int:
    """The index of the first word after the options (and their values) from ``start``;
    ``dash``: a lone ``-`` is an option too (``env -``)."""
    i = start
    while i < len(words):
        value = words[i].value
        if value == "--":
            return i + 1
        if not value.startswith("-") or (value == "-" and not dash):
            return i
        name = value.split("=", 1)[0]
        i += 2 if name in valued and "=" not in value else 1
    return i


def unwrap(words: list[Word]) -> Unwrapped:
    """Take wrappers (``env``, ``sudo``, ``timeout 5``, ``nice -n 5``...) off ``words``."""
    result = Unwrapped(words)
    while result.words and result.words[0].literal:
        name = program_name(result.words[0].value)
        wrapper = WRAPPERS.get(name)
        if wrapper is None:
            break
        rest = result.words
        if name == "command" and len(rest) > 1 and rest[1].value in _LOOKS_UP:
            break
        if name in _SCRIPT_OPTIONS and _script_option(name, rest[1:]) is not None:
            break  # ``flock f -c TEXT``: the text is read as a nested shell's
        if name == "env" and (split := _env_split(rest)) is not None:
            rest = split
            if not rest:
                result.problem = f"`{' '.join(w.value for w in words)}` splits an expansion"
                return result
        i = _options(rest, wrapper.valued, 1, dash=name == "env")
        if wrapper.assignments:
            while i < len(rest) and _is_assignment(rest[i].value):
                i += 1
        i = min(i + wrapper.operands, len(rest))
        if i >= len(rest):
            break  # ``sudo -v``, ``env``: the wrapper itself is what runs
        result.wrappers.append(name)
        result.escalated |= wrapper.escalates
        result.words = rest[i:]
    return result


def _env_split(words: list[Word]) -> list[Word] | None:
    """``env -S 'a b' c`` as ``env a b c``; None without ``-S``; [] if it can't be split."""
    for i, word in enumerate(words[1:], 1):
        value = word.value
        if value in ("-S", "--split-string") and i + 1 < len(words):
            text, after = words[i + 1], words[i + 2 :]
        elif value.startswith("--split-string="):
            text, after = Word(value.split("=", 1)[1], word.literal), words[i + 1 :]
        elif value.startswith("-S") and len(value) > 2:
            text, after = Word(value[2:], word.literal), words[i + 1 :]
        elif value.startswith("-") and value != "-":
            continue
        else:
            return None
        if not text.literal:
            return []
        try:
            return [*words[:i], *(Word(part) for part in shlex.split(text.value)), *after]
        except ValueError:
            return []
    return None


def shell_script(name: str, args: list[Word]) -> Word | None:
    """The script of ``sh -c SCRIPT`` (and ``su -c``, ``watch``, ``busybox sh -c``), or None."""
    if name in _SCRIPT_OPTIONS:
        return _script_option(name, args)
    if name == "trap":
        operands = [w for w in args if not w.value.startswith("-")]
        return operands[0] if len(operands) >= 2 else None
    if name == "alias":  # ``alias t=touch``: what the name will run, read as a command
        values = [Word(w.value.split("=", 1)[1], w.literal) for w in args if "=" in w.value]
        return _joined_lines(values) if values else None
    if name == "watch":
        i = _options(args, frozenset({"-n", "--interval", "-d", "--differences"}))
        return _joined(args[i:]) if i < len(args) else None
    if name not in SHELLS:
        return None
    i, runs_text = 0, False
    while i < len(args):
        value = args[i].value
        if value == "--" or not value.startswith(("-", "+")) or value in ("-", "+"):
            break
        if value in _SHELL_VALUED:
            i += 2
            continue
        runs_text |= not value.startswith("--") and "c" in value[1:]
        i += 1
    if runs_text:
        i += args[i].value == "--" if i < len(args) else 0
        return args[i] if i < len(args) else Word("")
    return None


def _script_option(name: str, args: list[Word]) -> Word | None:
    """The value of ``-c TEXT`` (also ``-qc TEXT``) or ``--command[=]TEXT``."""
    short, long = _SCRIPT_OPTIONS[name]
    for i, word in enumerate(args):
        value = word.value
        cluster = value.startswith("-") and not value.startswith("--") and value[-1] == short[1]
        if (value == long or cluster) and i + 1 < len(args):
            return args[i + 1]
        if value.startswith(long + "="):
            return Word(value.split("=", 1)[1], word.literal)
    return None


def reads_script_from_input(name: str, args: list[Word]) -> bool:
    """Whether shell ``name`` runs the commands it reads from its input (no ``-c``, no
    script file)."""
    if name not in SHELLS:
        return False
    i = 0
    while i < len(args) and args[i].value.startswith(("-", "+")) and args[i].value != "--":
        i += 2 if args[i].value in _SHELL_VALUED else 1
    rest = args[i + 1 :] if i < len(args) and args[i].value == "--" else args[i:]
    return not rest or any(w.value == "-s" for w in args[:i])


def _joined_lines(words: list[Word]) -> Word:
    return Word("\n".join(w.value for w in words), all(w.literal for w in words))


def _joined(words: list[Word]) -> Word:
    return Word(" ".join(w.value for w in words), all(w.literal for w in words))


def eval_script(args: list[Word]) -> Word:
    """What ``eval`` runs: its arguments joined with spaces."""
    return _joined(args)


def inner_commands(name: str, args: list[Word]) -> list[tuple[str, list[Word]]]:
    """The commands ``xargs`` and ``find -exec`` run, each with how it is run."""
    if name == "xargs":
        i = _options(args, _XARGS_VALUED)
        return [("xargs", args[i:] or [Word("echo")])]
    if name != "find":
        return []
    found: list[tuple[str, list[Word]]] = []
    i = 0
    while i < len(args):
        action = args[i].value
        if action not in _FIND_EXEC:
            i += 1
            continue
        end = i + 1
        while end < len(args) and args[end].value not in (";", "+"):
            end += 1
        if end > i + 1:
            found.append((f"find {action}", args[i + 1 : end]))
        i = end + 1
    return found
