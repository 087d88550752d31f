"""Which commands only read, as plan mode allows them: a short list of programs, each with
the options that would make it write or run another program.

Decided from the one analysis of the command (`tools.shell_reading`), so a program named by
a path in the workspace (``./ls``), a nested shell, a substitution or a redirection is seen.
"""

from __future__ import annotations

import os

from tools.shell_reading import SimpleCommand, analyse

READ_ONLY_PROGRAMS = frozenset(
    {"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "fd", "tree"}
    | {"pwd", "echo", "file", "stat", "du", "df", "which", "type", "sort", "uniq", "cut"}
    | {"diff", "jq", "git", "xargs", "true", "false", "basename", "dirname", "realpath"}
)
"""Programs that only read, unless given an option in `_WRITING_OPTIONS`. Not ``sed``,
``awk`` or ``env``: they can write files or start any program."""
READ_ONLY_GIT = frozenset({"status", "log", "diff", "show", "blame", "grep", "ls-files"})
_SYSTEM_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/opt/homebrew/bin"}
)
_QUIET_WRAPPERS = frozenset({"time", "nice", "timeout", "nohup", "command", "stdbuf", "ionice"})
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_HARMLESS_VARIABLES = frozenset({"LANG", "TZ", "NO_COLOR", "COLUMNS", "LINES", "TERM"})

_WRITING_OPTIONS: dict[str, tuple[frozenset[str], str]] = {
    # program: (options, short option letters) that write a file or run a program
    "find": (
        frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fls"})
        | frozenset({"-fprint", "-fprint0", "-fprintf"}),
        "",
    ),
    "sort": (frozenset({"--output", "--compress-program"}), "o"),
    "file": (frozenset({"--compile"}), "C"),
    "tree": (frozenset({"--output"}), "o"),
    "rg": (frozenset({"--pre"}), ""),
    "fd": (frozenset({"--exec", "--exec-batch"}), "xX"),
    "git": (
        frozenset({"--output", "--open-files-in-pager", "--ext-diff", "-c", "--config-env"})
        | frozenset({"--exec-path", "--upload-pack", "--receive-pack"}),
        "O",
    ),
}


def not_read_only(command: str) -> str | None:
    """Why ``command`` may change something (naming the part), or None when it only reads."""
    found = analyse(command)
    if found.unknown:
        return found.unknown[0]
    if found.writes:
        return f"it writes {', '.join(found.writes)}"
    for simple in found.commands:
        why = _why_not(simple)
        if why is not None:
            return why
    return None


def _why_not(simple: SimpleCommand) -> str | None:
    shown = f"`{simple.written}`"
    program = simple.argv[0] if simple.argv else ""
    if simple.path_qualified and os.path.dirname(program) not in _SYSTEM_DIRS:
        return f"{shown} runs a program by its path, not one of the system's read-only programs"
    if simple.escalated or any(w not in _QUIET_WRAPPERS for w in simple.wrappers):
        return f"{shown} runs through {', '.join(simple.wrappers)}"
    for assignment in simple.assignments:
        name = assignment.split("=", 1)[0]
        if name not in _HARMLESS_VARIABLES and not name.startswith("LC_"):
            return f"{shown} sets {name}"
    if simple.name not in READ_ONLY_PROGRAMS:
        return f"{shown} is not a read-only program"
    args = list(simple.argv[1:])
    if simple.name == "git":
        sub = _git_subcommand(args)
        if sub not in READ_ONLY_GIT:
            return f"{shown}: git {sub or '(no subcommand)'} may change the repository"
    if simple.name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
        return f"{shown} writes its second file"
    options, letters = _WRITING_OPTIONS.get(simple.name, (frozenset(), ""))
    for arg in args:
        name = arg.split("=", 1)[0]
        short = arg[1:] if arg.startswith("-") and not arg.startswith("--") else ""
        if name in options or any(letter in short for letter in letters):
            return f"{shown}: {name} writes a file or runs a program"
    return None


def _git_subcommand(args: list[str]) -> str:
    """``log`` in ``git -C sub --no-pager log``: the first word that is not a global option
    or its value."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GIT_VALUED else 1
    return args[i] if i < len(args) else ""
