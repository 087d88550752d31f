"""Sub-agent kinds from files, in Claude Code's format: Markdown with YAML frontmatter.

    ---
    name: reviewer
    description: Reviews a change for bugs.
    tools: Read, Grep, Glob          # omitted: every tool of the parent but task
    disallowedTools: Bash
    maxTurns: 10
    model: inherit                   # or provider:model, or sonnet / opus / haiku
    permissionMode: plan             # plan: read-only; acceptEdits, bypassPermissions: asks
    ---                              # less (a project's file: once allowed, /agents allow)
    You review code. ...              (the body is the child's system prompt)

Looked up in the project's ``.agent/agents/`` and ``.claude/agents/``, then the person's
``AGENT_HOME/agents/`` and ``~/.claude/agents/``; the first found wins a name. A broken file
is reported (path, line, what is wrong) and skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from agent.hooks.settings import CLAUDE_ALIASES, CLAUDE_TOOL_NAMES
from agent.subagents.kinds import BUILTIN_TYPES, SUBAGENT_NOTE, SubagentType

MAX_FILE_BYTES = 256 * 1024
_OURS = {claude: ours for ours, claude in CLAUDE_TOOL_NAMES.items()} | {
    alias: ours for ours, aliases in CLAUDE_ALIASES.items() for alias in aliases
}
MODES = ("default", "acceptEdits", "bypassPermissions", "plan")
MODES_TEXT = ", ".join(MODES)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(?P<head>.*?)\n---[ \t]*(?:\n|\Z)(?P<body>.*)\Z", re.S)


Scope = Literal["project", "user"]


@dataclass(frozen=True)
class Definitions:
    """The kinds found, one line per file that was skipped (``path:line: what is wrong``),
    and the files whose kind a file found earlier hides."""

    kinds: dict[str, SubagentType]
    problems: list[str]
    shadowed: list[SubagentType] = field(default_factory=list)


def agent_dirs(workspace: Path, agent_home: Path, person_home: Path) -> list[tuple[Path, Scope]]:
    """Where definitions are looked for, the first found winning a name."""
    return [
        (workspace / ".agent" / "agents", "project"),
        (workspace / ".claude" / "agents", "project"),
        (agent_home / "agents", "user"),
        (person_home / ".claude" / "agents", "user"),
    ]


def load_definitions(
    directories: Iterable[tuple[Path, Scope]], known_tools: Iterable[str]
) -> Definitions:
    """The built-in kinds and those of the files in ``directories`` (a file's kind replaces a
    built-in of the same name). ``known_tools``: the tool names a file may list."""
    known = set(known_tools)
    kinds: dict[str, SubagentType] = {}
    problems: list[str] = []
    shadowed: list[SubagentType] = []
    for directory, scope in directories:
        try:
            files = sorted(directory.glob("*.md")) if directory.is_dir() else []
        except OSError:
            continue
        for path in files:
            kind = _read(path, scope, known, problems)
            if kind is not None and kind.name in kinds:
                shadowed.append(kind)
            elif kind is not None:
                kinds[kind.name] = kind
    return Definitions({**BUILTIN_TYPES, **kinds}, problems, shadowed)


def _read(path: Path, scope: Scope, known: set[str], problems: list[str]) -> SubagentType | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            problems.append(f"{path}: larger than {MAX_FILE_BYTES} bytes; skipped")
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(f"{path}: cannot be read ({error}); skipped")
        return None
    found = _FRONTMATTER.match(text.replace("\r\n", "\n"))
    if found is None:
        problems.append(f"{path}:1: no frontmatter (a '---' block with name and description)")
        return None
    try:
        head = yaml.safe_load(found["head"])
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        problems.append(f"{path}:{line}: the frontmatter is not valid YAML; skipped")
        return None
    try:
        kind = _kind(head, found["body"].strip(), known)
    except KeyProblem as error:
        problems.append(f"{path}:{_line_of(found['head'], error.key)}: {error}; skipped")
        return None
    digest = hashlib.sha256(text.encode()).hexdigest()
    return replace(kind, scope=scope, source=path, digest=digest)


class KeyProblem(ValueError):
    """What is wrong with the frontmatter's ``key``."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _line_of(head: str, key: str) -> int:
    """The file's line where the frontmatter sets ``key`` (the line after ``---`` if not)."""
    for number, line in enumerate(head.splitlines(), start=2):
        if re.match(rf"{re.escape(key)}\s*:", line):
            return number
    return 2


def _kind(head: Any, body: str, known: set[str]) -> SubagentType:
    if not isinstance(head, dict):
        raise KeyProblem("", "the frontmatter must be a mapping of keys to values")
    name, description = head.get("name"), head.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        raise KeyProblem("name", "'name' is required: lowercase letters, digits, '-' and '_'")
    if not isinstance(description, str) or not description.strip():
        raise KeyProblem("description", "'description' is required")
    tools = _tools(head.get("tools"), known, "tools")
    denied = _tools(head.get("disallowedTools"), known, "disallowedTools") or frozenset()
    allowed = (tools if tools is not None else frozenset(known)) - denied
    if tools is None and not denied:
        allowed_or_all: frozenset[str] | None = None
    else:
        allowed_or_all = allowed
    turns = head.get("maxTurns")
    if turns is not None and (not isinstance(turns, int) or isinstance(turns, bool) or turns < 1):
        raise KeyProblem("maxTurns", "'maxTurns' must be a whole number above 0")
    mode = head.get("permissionMode")
    if mode is not None and mode not in MODES:
        raise KeyProblem("permissionMode", f"unknown permissionMode {mode!r} (use {MODES_TEXT})")
    model = head.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise KeyProblem("model", "'model' must be inherit, provider:model, sonnet, opus or haiku")
    return SubagentType(
        name=name,
        description=description.strip(),
        prompt=f"{SUBAGENT_NOTE}\n\n{body}" if body else SUBAGENT_NOTE,
        tools=allowed_or_all,
        read_only=mode == "plan",
        max_turns=turns,
        model=None if model is None or model.strip() == "inherit" else model.strip(),
        permission_mode=mode,
    )


def _tools(value: Any, known: set[str], key: str) -> frozenset[str] | None:
    if value is None:
        return None
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise KeyProblem(key, f"'{key}' must be a comma-separated list of tool names")
    ours = set()
    for raw in (n.strip() for n in names):
        if not raw:
            continue
        tool = _OURS.get(raw, raw)
        if tool == "task":
            continue  # a sub-agent never gets it
        if tool not in known and not tool.startswith("mcp__"):
            raise KeyProblem(key, f"unknown tool {raw!r} in '{key}'")
        ours.add(tool)
    return frozenset(ours)
