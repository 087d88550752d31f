"""One permission rule, parsed and matched; a `RuleSet` evaluated deny → ask → allow.

Claude Code's syntax and meaning:

- ``Bash`` (or ``run_command``) alone: every use of the tool; ``mcp__github`` every tool of
  that server; ``*`` in a name is a wildcard (``mcp__github__*``).
- ``Bash(npm test)`` that exact command; ``Bash(npm test:*)`` the command or the command
  followed by more words; ``*`` anywhere matches any text, and a lone trailing `` *`` may
  match nothing (``Bash(git push *)`` covers ``git push``). A compound command
  (``a && b``, ``a | b``, ``a; b``) is checked part by part: one part matching a deny or ask
  rule is enough; an allow rule must match every part, and a command substituting another
  (``$(...)``, backticks) is never allowed by a rule.
- ``Read(path)`` / ``Edit(path)``: gitignore-style patterns. ``/p`` or ``./p`` from the
  workspace root, ``p`` without a slash at any depth, ``//p`` absolute, ``~/p`` from home.
  ``Read`` covers every tool that only reads (read_file, list_files, search); ``Edit``
  every tool that writes files (edit_file, write_file).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from agent.hooks.settings import CLAUDE_TOOL_NAMES
from tools.ignore import glob_to_regex

_OUR_NAMES = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()}
"""Claude Code's tool names → ours (``Bash`` → ``run_command``)."""

_FAMILIES = {"read_file": "read", "edit_file": "edit"}
"""A rule naming one of these covers every tool of that kind, as Claude Code's Read and Edit
rules do."""

_RULE = re.compile(r"(?P<tool>[A-Za-z0-9_\-*]+)(?:\((?P<spec>.*)\))?", re.DOTALL)
_SEPARATORS = {";", "&&", "||", "|", "&", "|&", "\n"}
_WRAPPERS = frozenset({"env", "time", "nice", "nohup", "timeout", "sudo", "command", "exec"})


class RuleError(ValueError):
    """A rule that cannot be read; the message names it and says what is expected."""


class Verdict(StrEnum):
    """What the matching rules say about a call."""

    DENY = "deny"
    ASK = "ask"
    ALLOW = "allow"


@dataclass(frozen=True)
class Call:
    """What a rule looks at: the tool's name and kind, and its command or paths."""

    tool: str
    kind: str
    command: str | None = None
    paths: tuple[Path, ...] = ()
    """Resolved, absolute."""
    workspace: Path = Path(".")
    home: Path = Path("~")


@dataclass(frozen=True)
class Rule:
    """``tool`` (ours, or a name pattern) and its specifier, as written in ``text``."""

    text: str
    tool: str
    spec: str | None = None

    def matches(self, call: Call, *, part: str | None = None) -> bool:
        """Whether the rule covers ``call`` (for a command rule, the command ``part``)."""
        if not self._names(call):
            return False
        if self.spec is None or self.spec in ("", "*"):
            return True
        if call.command is not None:
            return _command_matches(self.spec, call.command if part is None else part)
        if call.paths:
            return any(_path_matches(self.spec, path, call) for path in call.paths)
        return False

    def _names(self, call: Call) -> bool:
        if self.tool == call.tool:
            return True
        family = _FAMILIES.get(self.tool)
        if family is not None and family == call.kind and call.command is None:
            return True
        if "*" in self.tool:
            return fnmatch.fnmatchcase(call.tool, self.tool)
        return self.tool.startswith("mcp__") and call.tool.startswith(self.tool + "__")


def parse_rule(text: str) -> Rule:
    """``Tool`` or ``Tool(specifier)``, Claude Code's tool names accepted for ours.

    Raises:
        RuleError: the text is not a rule.
    """
    stripped = text.strip()
    found = _RULE.fullmatch(stripped)
    if found is None:
        raise RuleError(
            f"{text!r} is not a permission rule; write Tool or Tool(specifier), "
            "e.g. run_command(npm test *), Bash(git push:*), Read(./.env), mcp__github__*"
        )
    tool = found["tool"]
    return Rule(stripped, _OUR_NAMES.get(tool, tool), found["spec"])


def split_rules(values: list[str]) -> list[str]:
    """Rules as given to ``--allowedTools``: each value may hold several, separated by commas
    or spaces outside parentheses (``"Bash(git log:*) Read"``)."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and (char == "," or char.isspace()):
                if current:
                    rules.append(current)
                current = ""
            else:
                current += char
        if current:
            rules.append(current)
    return rules


@dataclass
class RuleSet:
    """The rules in force; `verdict` evaluates them deny → ask → allow, first match wins."""

    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    allow: list[Rule] = field(default_factory=list)

    @classmethod
    def of(cls, deny: list[str], ask: list[str], allow: list[str]) -> RuleSet:
        """Parse the three lists; raises `RuleError` on the first bad rule."""
        return cls(
            [parse_rule(text) for text in deny],
            [parse_rule(text) for text in ask],
            [parse_rule(text) for text in allow],
        )

    def verdict(self, call: Call) -> tuple[Verdict, Rule] | None:
        """The first rule (deny, then ask, then allow) covering ``call``, or None."""
        parts = command_parts(call.command) if call.command is not None else [None]
        # Deny and ask also look past wrappers; allow never does (FOO=x can change a program).
        wider = [*parts, *(unwrapped(part) for part in parts if part is not None)]
        for kind, rules in ((Verdict.DENY, self.deny), (Verdict.ASK, self.ask)):
            for rule in rules:
                if any(rule.matches(call, part=part) for part in wider):
                    return kind, rule
        if call.command is not None and ("$(" in call.command or "`" in call.command):
            return None
        chosen: Rule | None = None
        for part in parts:
            found = next((rule for rule in self.allow if rule.matches(call, part=part)), None)
            if found is None:
                return None
            chosen = chosen or found
        return (Verdict.ALLOW, chosen) if chosen is not None else None


def command_parts(command: str) -> list[str]:
    """The simple commands of ``command``: split at ``;``, ``&&``, ``||``, ``|``, ``&``,
    new lines, parentheses and backticks, so a subshell or a substitution is a part too."""
    # A new line or a backtick inside quotes becomes " ; " inside a word: still one part.
    text = command.replace("\n", " ; ").replace("`", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: one part, as written (the shell refuses it too)
        return [command.strip()]
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set(";&|()"):
            parts.append([])
        else:
            parts[-1].append(token)
    return [" ".join(words) for words in parts if words] or [command.strip()]


def unwrapped(part: str) -> str:
    """``part`` without leading ``VAR=value`` words and wrappers (``env``, ``timeout 10``,
    ``nice -n 5``, ``sudo``...), so ``FOO=1 git push`` meets a ``git push`` deny rule."""
    words = part.split()
    while words:
        if "=" in words[0] and not words[0].startswith(("=", "-")):
            words.pop(0)
        elif words[0] in _WRAPPERS:
            words.pop(0)
            while words and (words[0].startswith("-") or words[0][:1].isdigit()):
                words.pop(0)
        else:
            break
    return " ".join(words)


def _command_matches(spec: str, command: str) -> bool:
    command = " ".join(command.split())
    spec = " ".join(spec.split())
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" not in spec:
        return command == spec
    if spec.endswith(" *") and spec.count("*") == 1 and command == spec[:-2]:
        return True
    pattern = ".*".join(re.escape(piece) for piece in spec.split("*"))
    return re.fullmatch(pattern, command, re.DOTALL) is not None


def _path_matches(spec: str, path: Path, call: Call) -> bool:
    if spec.startswith("//"):
        return _glob(spec[1:], path.as_posix())
    if spec.startswith("~/"):
        return _glob(str(call.home / spec[2:]), path.as_posix())
    try:
        relative = path.relative_to(call.workspace).as_posix()
    except ValueError:
        return False
    anchored = spec.startswith(("/", "./")) or "/" in spec.rstrip("/")
    pattern = spec.removeprefix("./").lstrip("/")
    if not anchored:
        pattern = "**/" + pattern
    return _glob(pattern, relative)


def _glob(pattern: str, path: str) -> bool:
    # ``dir/`` and ``dir/**`` cover the directory itself too: listing or searching it would
    # show what is inside. A directory's pattern covers what is inside it, as in .gitignore.
    pattern = pattern.removesuffix("**") if pattern.endswith("/**") else pattern
    regex = glob_to_regex(pattern.rstrip("/") or pattern)
    return re.fullmatch(f"{regex}(?:/.*)?", path, re.DOTALL) is not None
