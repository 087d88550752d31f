"""One permission rule, parsed and matched; a `RuleSet` evaluated deny → ask → allow.

Claude Code's syntax and meaning:

- ``Bash`` (or ``run_command``) alone: every use of the tool; ``mcp__github`` every tool of
  that server; ``*`` in a name is a wildcard (``mcp__github__*``).
- ``Bash(npm test)`` that exact command; ``Bash(npm test:*)`` the command or the command
  followed by more words; ``*`` anywhere matches any text, and a lone trailing `` *`` may
  match nothing (``Bash(git push *)`` covers ``git push``). A command is checked by the
  simple commands it runs, as the one analysis (`tools.shell_reading`) reads them: nested
  shells, substitutions, ``xargs``/``find -exec`` and wrappers included. One of them
  matching a deny or ask rule is enough (wrappers taken off, ``/usr/bin/x`` read as ``x``);
  an allow rule must match every one as written. The files it writes are checked as an
  ``Edit`` of each, the files its reading programs name as a ``Read``, so ``Bash(echo:*)``
  never covers ``echo x > file``. A part that cannot be known before it runs (``$cmd``,
  ``eval "$x"``, ``source f``) is asked about while any deny or ask rule for Bash is in force.
- ``Read(path)`` / ``Edit(path)``: gitignore-style patterns. ``/p`` or ``./p`` from the
  workspace root, ``p`` without a slash at any depth, ``//p`` absolute, ``~/p`` from home.
  ``Read`` covers every tool that only reads (read_file, list_files, search); ``Edit``
  every tool that writes files (edit_file, write_file).
- ``WebFetch(domain:example.com)`` (or ``web_fetch(...)``): fetches from that host;
  ``domain:*.example.com`` its subdomains too.
- ``WebSearch`` (or ``web_search``): every web search (a search names no one host).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from agent.hooks.settings import CLAUDE_ALIASES, CLAUDE_TOOL_NAMES
from agent.permissions.commands import CommandTargets, deny_forms, inside, targets
from tools.ignore import glob_to_regex

_OUR_NAMES = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()} | {
    alias: ours for ours, aliases in CLAUDE_ALIASES.items() for alias in aliases
}
"""Claude Code's tool names → ours (``Bash`` → ``run_command``)."""

_FAMILIES = {"read_file": "read", "edit_file": "edit"}
"""A rule naming one of these covers every tool of that kind, as Claude Code's Read and Edit
rules do."""

_RULE = re.compile(r"(?P<tool>[A-Za-z0-9_\-*]+)(?:\((?P<spec>.*)\))?", re.DOTALL)


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
    domain: str | None = None
    """The host a network tool reaches, lower case."""


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
        if call.domain is not None:
            return _domain_matches(self.spec, call.domain)
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
        if call.command is not None:
            return self._command_verdict(call, call.command)
        for kind, rules in ((Verdict.DENY, self.deny), (Verdict.ASK, self.ask)):
            found = next((rule for rule in rules if rule.matches(call)), None)
            if found is not None:
                return kind, found
        found = next((rule for rule in self.allow if rule.matches(call)), None)
        return (Verdict.ALLOW, found) if found is not None else None

    def _command_verdict(self, call: Call, command: str) -> tuple[Verdict, Rule] | None:
        probe = _on_file(call, "read_file", "read", call.workspace)
        reading = any(rule._names(probe) for rule in (*self.deny, *self.ask))
        touched = targets(command, call.workspace, call.home, reads=reading)
        forms = [form for c in touched.analysis.commands for form in deny_forms(c)]
        for kind, rules in ((Verdict.DENY, self.deny), (Verdict.ASK, self.ask)):
            for rule in rules:
                if rule.matches(call, part=command) or any(
                    rule.matches(call, part=form) for form in forms
                ):
                    return kind, rule
            found = _file_rule(rules, touched, call)
            if found is not None:
                return kind, found
        unknown = touched.analysis.unknown
        if unknown and any(rule.tool == call.tool for rule in (*self.deny, *self.ask)):
            return Verdict.ASK, unreadable_rule(unknown[0], "Bash")
        unread = touched.analysis.unknown_reads
        if unread and reading:
            return Verdict.ASK, unreadable_rule(unread[0], "Read")
        if unknown or not touched.analysis.commands:
            return None
        return self._allowed(call, touched)

    def _allowed(self, call: Call, touched: CommandTargets) -> tuple[Verdict, Rule] | None:
        chosen: Rule | None = None
        every_command = True  # only ``Bash`` / ``Bash(*)`` matched: all commands are allowed
        for simple in touched.analysis.commands:
            found = next((r for r in self.allow if r.matches(call, part=simple.written)), None)
            if found is None:
                return None
            chosen = chosen or found
            every_command &= found.spec in (None, "", "*")
        for path in () if every_command else touched.writes:
            written = _on_file(call, "write_file", "edit", path)
            if not any(rule.matches(written) for rule in self.allow):
                return None  # writing a file asks, as it does from the file tools
        return (Verdict.ALLOW, chosen) if chosen is not None else None


def unreadable_rule(reason: str, kind: str) -> Rule:
    """What stands for a rule when a command cannot be read while ``kind`` (Bash, Read)
    deny or ask rules are in force."""
    return Rule(
        f"the command cannot be fully read before it runs ({reason}), and deny or ask "
        f"rules for {kind} are in force",
        "run_command",
    )


def _on_file(call: Call, tool: str, kind: str, path: Path) -> Call:
    return Call(tool, kind, paths=(path,), workspace=call.workspace, home=call.home)


def _file_rule(rules: list[Rule], touched: CommandTargets, call: Call) -> Rule | None:
    """The first of ``rules`` covering a file the command writes (as an Edit of it), reads
    or searches through (as a Read of it)."""
    checks = [_on_file(call, "write_file", "edit", path) for path in touched.writes]
    checks += [_on_file(call, "read_file", "read", path) for path in touched.reads]
    for check in checks:
        found = next((rule for rule in rules if rule.matches(check)), None)
        if found is not None:
            return found
    probe = _on_file(call, "read_file", "read", call.workspace)
    reading = [rule for rule in rules if rule._names(probe)]
    for directory in touched.searches if reading else ():
        entries, whole = inside(directory)
        for path in entries:
            check = _on_file(call, "read_file", "read", path)
            found = next((rule for rule in reading if rule.matches(check)), None)
            if found is not None:
                return found
        if not whole:  # too big to look through: it may reach what the rule names
            return reading[0]
    return None


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


def _domain_matches(spec: str, domain: str) -> bool:
    """``domain:example.com`` covers that host; ``domain:*.example.com`` its subdomains and
    itself."""
    key, _, wanted = spec.partition(":")
    if key.strip() != "domain":
        return False
    wanted = wanted.strip().lower().rstrip(".")
    if wanted.startswith("*."):
        return domain == wanted[2:] or domain.endswith(wanted[1:])
    return domain == wanted


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
