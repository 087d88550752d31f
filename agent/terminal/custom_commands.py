"""Slash commands from Markdown files, in Claude Code's format.

Where they come from, the first found winning: ``.agent/commands/`` and ``.claude/commands/``
in the project, then ``~/.config/agent/commands/`` (``$XDG_CONFIG_HOME`` respected) and
``~/.claude/commands/``. ``review.md`` is ``/review``; a file in a subdirectory keeps its
own name, the directory shown in its description (``(project:frontend)``).

The body is the prompt. ``$ARGUMENTS`` is everything typed after the name, ``$1`` … ``$9``
its words (quotes group words); a body using neither gets the arguments appended, as
Claude Code does. ``!`cmd``` is replaced by the command's output. Frontmatter keys:
``description``, ``argument-hint``, ``allowed-tools`` (permission rules that hold while the
command runs).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent.permissions import split_rules

SHELL_LINE = re.compile(r"!`([^`\n]+)`")
_POSITIONAL = re.compile(r"\$([1-9])")
MAX_BYTES = 64 * 1024
Scope = Literal["project", "user"]


@dataclass(frozen=True)
class CustomCommand:
    """One command file, read."""

    name: str
    """With the slash: ``/review``."""
    path: Path
    scope: Scope
    body: str
    description: str = ""
    argument_hint: str = ""
    allowed_tools: list[str] = field(default_factory=list)
    namespace: str = ""

    @property
    def shell_lines(self) -> list[str]:
        """The commands of its ``!`cmd``` lines, in order."""
        return SHELL_LINE.findall(self.body)

    @property
    def needs_trust(self) -> bool:
        """A project's command that runs commands or allows tools: the repository's code."""
        return self.scope == "project" and bool(self.shell_lines or self.allowed_tools)

    @property
    def digest(self) -> str:
        """What the person's trust is given to: this exact file."""
        return hashlib.sha256(
            f"{self.path}\0{self.body}\0{self.allowed_tools}".encode()
        ).hexdigest()

    @property
    def summary(self) -> str:
        """The description for /help and completion."""
        where = f"{self.scope}:{self.namespace}" if self.namespace else self.scope
        text = self.description or _first_line(self.body)
        return f"{text} ({where})"

    @property
    def usage(self) -> str:
        return f"{self.name} {self.argument_hint}".strip()

    def render(self, arguments: str) -> str:
        """The body with the arguments put in (shell lines still to run)."""
        try:
            words = shlex.split(arguments)
        except ValueError:
            words = arguments.split()
        uses = "$ARGUMENTS" in self.body or _POSITIONAL.search(self.body) is not None
        text = self.body.replace("$ARGUMENTS", arguments)
        text = _POSITIONAL.sub(lambda m: _word(words, int(m.group(1))), text)
        if arguments and not uses:
            text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
        return text


def command_dirs(workspace: Path, environ: Mapping[str, str]) -> list[tuple[Path, Scope]]:
    """Where commands are looked for, the first winning a name taken twice."""
    home = Path(environ.get("HOME", "~")).expanduser()
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config").expanduser()
    return [
        (workspace / ".agent" / "commands", "project"),
        (workspace / ".claude" / "commands", "project"),
        (config / "agent" / "commands", "user"),
        (home / ".claude" / "commands", "user"),
    ]


def find_commands(
    workspace: Path, environ: Mapping[str, str], taken: set[str] | frozenset[str] = frozenset()
) -> dict[str, CustomCommand]:
    """The commands, by name; a name in ``taken`` (a built-in command) is skipped."""
    found: dict[str, CustomCommand] = {}
    for directory, scope in command_dirs(workspace, environ):
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*.md")):
            name = "/" + path.stem.lower()
            if name in found or name in taken or not re.fullmatch(r"/[\w.:-]+", name):
                continue
            command = read_command(path, scope, directory)
            if command is not None:
                found[name] = command
    return found


def read_command(path: Path, scope: Scope, directory: Path) -> CustomCommand | None:
    """The command in ``path``; None when it is not a readable text file."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    meta, body = _frontmatter(text)
    tools = meta.get("allowed-tools") or []
    rules = split_rules([tools]) if isinstance(tools, str) else []
    if isinstance(tools, list):
        rules = [str(rule) for rule in tools]
    namespace = path.parent.relative_to(directory).as_posix()
    return CustomCommand(
        name="/" + path.stem.lower(),
        path=path,
        scope=scope,
        body=body.strip(),
        description=str(meta.get("description") or ""),
        argument_hint=str(meta.get("argument-hint") or ""),
        allowed_tools=rules,
        namespace="" if namespace == "." else namespace,
    )


def _frontmatter(text: str) -> tuple[dict[str, object], str]:
    """The ``key: value`` lines between ``---`` lines, and the body after them.

    Read line by line, not as YAML: hints such as ``[pr-number] [priority]`` are not valid
    YAML, and Claude Code takes them as written. ``- item`` lines make a list.
    """
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        return {}, text
    meta: dict[str, object] = {}
    key = ""
    for line in head.splitlines():
        item = line.strip()
        if item.startswith("- ") and key:
            earlier = meta.get(key)
            meta[key] = [*(earlier if isinstance(earlier, list) else []), _unquote(item[2:])]
        elif ":" in item:
            key, _, value = item.partition(":")
            key = key.strip()
            meta[key] = _unquote(value.strip())
    return meta, body.partition("\n")[2]


def _unquote(value: str) -> str:
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _word(words: list[str], number: int) -> str:
    return words[number - 1] if number <= len(words) else ""


def _first_line(body: str) -> str:
    line = next((line for line in body.splitlines() if line.strip()), "")
    return line.strip().lstrip("#").strip()[:60]
