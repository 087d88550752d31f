"""Which files a program writes or reads, from its name and argument words.

Only programs whose operands are files are read here; what a program does with a name it
computes (a script opening a file) is seen only where the name is written in the command,
as in ``python3 -c "open('.env')"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from tools.shell_reading.words import Word

_READERS = frozenset(
    {"cat", "tac", "nl", "head", "tail", "less", "more", "most", "bat", "batcat", "view"}
    | {"base64", "base32", "basenc", "xxd", "hexdump", "hd", "od", "strings", "cut", "sort"}
    | {"uniq", "wc", "diff", "cmp", "comm", "paste", "join", "fold", "fmt", "pr", "iconv"}
    | {"md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "zcat", "gzip"}
    | {"bzip2", "xz", "zstd", "jq", "yq", "vi", "vim", "nvim", "nano", "emacs", "ed", "ex"}
    | {"7z", "openssl", "gpg", "file", "source", ".", "column", "expand", "unexpand", "rev"}
    | {"unzip", "split", "csplit", "look", "sum", "ctags", "patch"}
)
"""Programs that read the files they are given."""
_COPIERS = frozenset({"cp", "mv", "ln", "install", "scp", "rsync", "tar", "zip"})
"""Programs that read their sources into another file (``tar`` and ``zip`` recursively)."""
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk"})
_PATTERN_FIRST_AWKS = frozenset({"mawk", "nawk", "zgrep", "git-grep"})
_PATTERN_GIVEN = frozenset({"-e", "-f", "--regexp", "--file", "--expression"})
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack"})
_RECURSIVE_FLAGS = frozenset({"-r", "-R", "--recursive", "-a", "--archive"})
_INTERPRETERS = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|lua[0-9.]*|Rscript"
    r"|julia|sh|bash|zsh|dash|ksh|osascript|tclsh|awk|gawk)$"
)
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "-p", "--print", "-ne", "-pe"})
_QUOTED = re.compile(r"""'([^'\n]{1,4096})'|"([^"\n]{1,4096})"|`([^`\n]{1,4096})`""")
_UPLOADS = frozenset({"-T", "--upload-file", "-d", "--data", "--data-binary", "-F", "--form"})


_NAMED = (
    _READERS
    | _PATTERN_FIRST
    | _PATTERN_FIRST_AWKS
    | _COPIERS
    | {"tee", "dd", "sort", "uniq", "curl", "wget", "sed", "xargs", "find"}
)
"""Every program `writes` and `reads` know (besides interpreters)."""


@lru_cache(maxsize=4096)
def interpreter(name: str) -> bool:
    """Whether ``name`` runs program text (``python3``, ``node``, ``awk``...)."""
    return _INTERPRETERS.match(name) is not None


def touches_files(name: str) -> bool:
    """Whether `writes`, `reads` or `started_texts` can find anything for ``name``."""
    return name in _NAMED or interpreter(name)


def _operands(args: list[Word], valued: frozenset[str] = frozenset()) -> list[Word]:
    """The words that are not options or the values of ``valued`` options (``--`` ends the
    options)."""
    found: list[Word] = []
    ended = skip = False
    for word in args:
        value = word.value
        if skip:
            skip = False
        elif ended or value[:1] != "-" or value == "-":
            found.append(word)
        elif value == "--":
            ended = True
        else:
            skip = value in valued
    return found


def _after(args: list[Word], short: str, long: str) -> list[Word]:
    """Values of ``-o FILE``, ``-oFILE``, ``--output FILE`` and ``--output=FILE``."""
    found: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value[:1] != "-":  # every option named here starts so
            continue
        if value in (short, long):
            if i + 1 < len(args):
                found.append(args[i + 1])
        elif value.startswith(long + "="):
            found.append(Word(value.split("=", 1)[1], word.literal))
        elif value.startswith(short) and len(value) > len(short) and not value.startswith("--"):
            found.append(Word(value[len(short) :], word.literal))
    return found


def _copied_to(args: list[Word]) -> list[Word]:
    target = _after(args, "-t", "--target-directory")
    operands = _operands(args)
    return target or (operands[-1:] if len(operands) >= 2 else [])


def _downloaded_to(args: list[Word]) -> list[Word]:
    return _after(args, "-o", "--output") + _after(args, "-O", "--output-document")


def _edited_in_place(args: list[Word]) -> list[Word]:
    if not any(w.value.startswith(("-i", "--in-place")) for w in args):
        return []
    given = _pattern_given(args)
    operands = _operands(args, _PATTERN_GIVEN)
    return operands if given else operands[1:]


_WRITERS: dict[str, Callable[[list[Word]], list[Word]]] = {
    "tee": _operands,
    "dd": lambda args: [Word(w.value[3:], w.literal) for w in args if w.value.startswith("of=")],
    **dict.fromkeys(("cp", "mv", "install", "ln", "rsync", "scp"), _copied_to),
    "sort": lambda args: _after(args, "-o", "--output"),
    "uniq": lambda args: _operands(args)[1:2],
    "curl": _downloaded_to,
    "wget": _downloaded_to,
    "sed": _edited_in_place,
}


def writes(name: str, args: list[Word]) -> list[Word]:
    """The files ``name`` writes, named in ``args``."""
    writer = _WRITERS.get(name)
    return writer(args) if writer is not None else []


def _pattern_given(args: list[Word]) -> bool:
    """Whether a pattern is given by an option (``-e``, ``-f``, ``--regexp=``...), so
    the first operand is a file too."""
    return any(word.value.partition("=")[0] in _PATTERN_GIVEN for word in args)


def _searched(name: str, args: list[Word]) -> tuple[list[Word], list[Word]]:
    """What ``grep``, ``sed``, ``awk``... read: their operands after the pattern."""
    recursive = name in _ALWAYS_RECURSIVE
    given = False
    for word in args:
        value = word.value
        if value[:1] == "-":
            given = given or value.partition("=")[0] in _PATTERN_GIVEN
            recursive = recursive or _recursive_flag(value)
    files = _operands(args, _PATTERN_GIVEN) if given else _operands(args)[1:]
    files += _after(args, "-f", "--file")  # patterns or a program read from a file
    if recursive:
        return [], files or [Word(".")]
    return files, []


def _copied(name: str, args: list[Word]) -> tuple[list[Word], list[Word]]:
    operands = _operands(args)
    sources = operands if name in ("tar", "zip") else operands[:-1]
    if any(_recursive_flag(w.value) for w in args) or name in ("tar", "zip"):
        return [], sources
    return sources, []


def _fetched(_name: str, args: list[Word]) -> tuple[list[Word], list[Word]]:
    return _uploads(args) + _after(args, "--post-file", "--post-file"), []


_READS: dict[str, Callable[[str, list[Word]], tuple[list[Word], list[Word]]]] = {
    **dict.fromkeys(_READERS, lambda _name, args: (_operands(args), [])),
    **dict.fromkeys(_COPIERS, _copied),
    **dict.fromkeys(_PATTERN_FIRST | _PATTERN_FIRST_AWKS, _searched),
    "find": lambda _name, args: ([], _found_and_read(args)),
    "xargs": lambda _name, args: (_after(args, "-a", "--arg-file"), []),
    "curl": _fetched,
    "wget": _fetched,
    "dd": lambda _name, args: (
        [Word(w.value[3:], w.literal) for w in args if w.value.startswith("if=")],
        [],
    ),
}
"""How each program reads, most specific first: an interpreter's name is matched before
these (``awk`` reads its program text, not a pattern)."""


def reads(name: str, args: list[Word]) -> tuple[list[Word], list[Word]]:
    """``(files, directories)``: what ``name`` reads, and the directories it reads through."""
    if name in ("dd", "curl", "wget", "xargs"):
        return _READS[name](name, args)
    if interpreter(name):
        return _interpreted(args), []
    reader = _READS.get(name)
    return reader(name, args) if reader is not None else ([], [])


def _recursive_flag(value: str) -> bool:
    if value in _RECURSIVE_FLAGS:
        return True
    return value.startswith("-") and not value.startswith("--") and ("r" in value or "R" in value)


def _interpreted(args: list[Word]) -> list[Word]:
    """Names written inside inline code (``-c``/``-e``), and every operand (the script and
    the files it is given)."""
    found: list[Word] = []
    code_at: set[int] = set()
    for i, word in enumerate(args):
        if word.value in _CODE_FLAGS and i + 1 < len(args):
            found.extend(quoted_names(args[i + 1].value))
            code_at.add(i + 1)
    rest = [word for i, word in enumerate(args) if i not in code_at]
    return found + _operands(rest)


_RUNS_PROGRAMS = re.compile(
    r"system|popen|subprocess|spawn|exec|child_process|shell_exec|passthru|proc_open"
    r"|Runtime|ProcessBuilder|`|%x|\bos\.run|\bsh\("
)
"""Words in program text that start another program (``os.system``, ``subprocess.run``,
``child_process.exec``, awk's ``system``...)."""
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


def started_texts(name: str, args: list[Word]) -> list[str]:
    """The quoted strings of inline program text that starts other programs
    (``python3 -c "os.system('touch x')"``): each may be a command line, or a program's
    name (``subprocess.run(['touch', 'x'])``). Empty for any other command."""
    if not _INTERPRETERS.match(name):
        return []
    codes = [args[i + 1].value for i, w in enumerate(args[:-1]) if w.value in _CODE_FLAGS]
    if name in _AWKS and not any(w.value.startswith("-f") for w in args):
        codes += [w.value for w in _operands(args)[:1]]
    return [
        found.value for code in codes if _RUNS_PROGRAMS.search(code) for found in quoted_names(code)
    ]


def quoted_names(code: str) -> list[Word]:
    """The quoted strings inside program text: the file names a script would open."""
    return [Word(next(g for g in m.groups() if g is not None)) for m in _QUOTED.finditer(code)]


def _uploads(args: list[Word]) -> list[Word]:
    found: list[Word] = []
    for i, word in enumerate(args):
        if word.value in _UPLOADS and i + 1 < len(args):
            value = args[i + 1].value
            _, _, after = value.rpartition("=")
            if word.value in ("-T", "--upload-file"):
                found.append(Word(value, args[i + 1].literal))
            elif after.startswith(("@", "<")):
                found.append(Word(after[1:], args[i + 1].literal))
    return found


def _found_and_read(args: list[Word]) -> list[Word]:
    """The directories ``find`` walks when its ``-exec`` runs a program that reads files."""
    starts: list[Word] = []
    for word in args:
        if word.value.startswith(("-", "(", "!")):
            break
        starts.append(word)
    for i, word in enumerate(args[:-1]):
        if word.value in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = args[i + 1].value.rsplit("/", 1)[-1]
            if inner in _READERS or inner in _PATTERN_FIRST or _INTERPRETERS.match(inner):
                return starts or [Word(".")]
    return []
