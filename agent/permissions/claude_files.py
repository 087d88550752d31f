"""Claude Code's permission rules, read from its settings files, so existing rules hold here.

Where they come from (Claude Code's files): ``~/.claude/settings.json`` (the person's),
``.claude/settings.json`` (the project's, shared in the repository) and
``.claude/settings.local.json`` (the project's, personal). ``permissions.allow``, ``ask``,
``deny`` and ``defaultMode`` are read; every other key belongs to Claude Code
(``additionalDirectories`` is named as not applied: this agent works in one workspace).
Rules add up across the files and our ``permissions:`` configuration, as Claude Code merges
its scopes, so where a rule is written never changes what it does: deny, then ask, then
allow. ``defaultMode`` is one value: the last file that sets one wins (local, project, user).

A project file is the repository's: its allow rules wait for the person to trust the
project (`agent.setup.trust`); its deny and ask rules only tighten and always hold. A file
that is not JSON, or a key of the wrong shape, is said in one line naming the file; the
other files and rules still apply. A rule naming a tool this agent does not have
(``WebFetch(domain:example.com)``) is kept, matches nothing, and is listed as ignored.

A project's ``defaultMode`` that is looser than the person's mode (``acceptEdits`` over
``default``, ``default`` over ``plan``) waits for trust as its allow rules do
(`agent.setup.config_claude`); its ``bypassPermissions`` never applies (Claude Code ignores it
there too, so a cloned repository cannot turn every question off).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent.permissions.modes import MODE_IDS
from agent.permissions.rules import RuleError, parse_rule

Scope = Literal["user", "project", "local"]
KINDS = ("allow", "ask", "deny")
UNSUPPORTED_MODES = {
    "auto": "it needs Claude Code's safety classifier",
    "dontAsk": "use permission rules with --approval ask instead",
}
MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ClaudeFile:
    """The rules of one settings file, by kind (``allow``, ``ask``, ``deny``)."""

    path: Path
    scope: Scope
    label: str
    """How the file is named to the person: ``.claude/settings.json``, ``~/.claude/...``."""
    rules: dict[str, list[str]] = field(default_factory=dict)
    default_mode: str | None = None
    """Its ``permissions.defaultMode``, one of `MODE_IDS`."""


@dataclass
class ClaudeRules:
    """What Claude Code's settings files say, and what could not be read in them."""

    files: list[ClaudeFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def held(self) -> dict[str, list[str]]:
        """The project files' allow rules, by file: they wait for the project's trust."""
        return {
            item.label: list(item.rules["allow"])
            for item in self.files
            if item.scope != "user" and item.rules.get("allow")
        }

    def mode_of(self, *, project: bool) -> tuple[str, str] | None:
        """The ``defaultMode`` (mode, label of its file) of the project's files (the nearest
        that sets one), or of the person's file."""
        modes = [
            (item.default_mode, item.label)
            for item in self.files
            if item.default_mode is not None and (item.scope != "user") == project
        ]
        return modes[-1] if modes else None

    def layer(self, *, trusted: bool) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The rules to add to ``permissions:`` (project allow rules only when ``trusted``),
        and where each came from (`origin_key` → the file's label)."""
        added: dict[str, list[str]] = {kind: [] for kind in KINDS}
        origins: dict[str, str] = {}
        for item in self.files:
            for kind in KINDS:
                if kind == "allow" and item.scope != "user" and not trusted:
                    continue
                for text in item.rules.get(kind, []):
                    added[kind].append(text)
                    origins.setdefault(origin_key(kind, text), item.label)
        return added, origins


def origin_key(kind: str, text: str) -> str:
    """The key of a rule in an origins mapping: ``"deny:Read(./.env)"``."""
    return f"{kind}:{text.strip()}"


def claude_files(workspace: Path, environ: Mapping[str, str]) -> list[tuple[Path, Scope, str]]:
    """Claude Code's settings files, lowest precedence first, with how each is named."""
    home = Path(environ.get("HOME", "~")).expanduser()
    return [
        (home / ".claude" / "settings.json", "user", "~/.claude/settings.json"),
        (workspace / ".claude" / "settings.json", "project", ".claude/settings.json"),
        (workspace / ".claude" / "settings.local.json", "local", ".claude/settings.local.json"),
    ]


def read_claude_rules(workspace: Path, environ: Mapping[str, str]) -> ClaudeRules:
    """The permission rules of every Claude Code settings file that exists; never raises."""
    found = ClaudeRules()
    for path, scope, label in claude_files(workspace, environ):
        data = _read_json(path, label, found.warnings)
        if data is None:
            continue
        rules = _permission_rules(data, label, found.warnings)
        mode = _default_mode(data, scope, label, found.warnings)
        if rules or mode:
            found.files.append(ClaudeFile(path, scope, label, rules, mode))
    return found


def _read_json(path: Path, label: str, warnings: list[str]) -> dict[str, Any] | None:
    try:
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as error:
        warnings.append(
            f"{label}: cannot be read ({error.strerror or error}); its rules are ignored"
        )
        return None
    if len(raw) > MAX_BYTES:
        warnings.append(f"{label}: larger than {MAX_BYTES} bytes; its rules are ignored")
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        where = f" (line {error.lineno})" if isinstance(error, json.JSONDecodeError) else ""
        warnings.append(f"{label}: not valid JSON{where}; its permission rules are ignored")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{label}: must be a JSON object; its permission rules are ignored")
        return None
    return data


def _permission_rules(
    data: dict[str, Any], label: str, warnings: list[str]
) -> dict[str, list[str]]:
    permissions = data.get("permissions")
    if permissions is None:
        return {}
    if not isinstance(permissions, dict):
        warnings.append(f"{label}: 'permissions' must be an object; its rules are ignored")
        return {}
    rules: dict[str, list[str]] = {}
    for kind in KINDS:
        values = permissions.get(kind)
        if values is None:
            continue
        if not isinstance(values, list):
            warnings.append(f"{label}: 'permissions.{kind}' must be a list of rules; ignored")
            continue
        for value in values:
            if not isinstance(value, str):
                warnings.append(f"{label}: permissions.{kind} has a non-text entry; it is ignored")
                continue
            try:
                parse_rule(value)
            except RuleError:
                warnings.append(f"{label}: permissions.{kind}: {value!r} is not a rule; ignored")
                continue
            rules.setdefault(kind, []).append(value.strip())
    return rules


def _default_mode(
    data: dict[str, Any], scope: Scope, label: str, warnings: list[str]
) -> str | None:
    permissions = data.get("permissions")
    if not isinstance(permissions, dict):
        return None
    if permissions.get("additionalDirectories"):
        warnings.append(
            f"{label}: permissions.additionalDirectories is not applied: agent works in one "
            "workspace (start it in a directory that holds them all)"
        )
    mode = permissions.get("defaultMode")
    if mode is None:
        return None
    if isinstance(mode, str) and mode in UNSUPPORTED_MODES:
        warnings.append(
            f"{label}: permissions.defaultMode {mode!r} is not applied: {UNSUPPORTED_MODES[mode]}"
        )
        return None
    if not isinstance(mode, str) or mode not in MODE_IDS:
        known = ", ".join(MODE_IDS)
        warnings.append(f"{label}: permissions.defaultMode must be one of {known}; ignored")
        return None
    if mode == "bypassPermissions" and scope != "user":
        warnings.append(
            f"{label}: permissions.defaultMode 'bypassPermissions' is not applied from a "
            "project's file; set it in ~/.claude/settings.json or pass --yes"
        )
        return None
    return mode
