"""Which of a repository's ``agent.yaml`` settings the person allowed in this workspace (and
the allow rules and mode of its Claude Code settings files, asked about with them).

A cloned repository is untrusted input, and its ``agent.yaml`` is read on every start there.
Before the person trusts it, it may only make the agent stricter than the person's own
effective configuration (`agent.setup.trust_table` decides, key by key); what would loosen it
(run tools without asking, leave plan mode, enable more tools, unconfine commands, stop hiding
a secret, send the API key to another server, start programs) applies only once the person
allowed it: the REPL asks at start, ``agent trust`` allows it from a shell, and until then the
agent runs without it and says so. An approval holds for the exact settings (a digest of
them); a change is asked about again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.setup.trust_table import TABLE, split
from tools.mcp import ProjectApprovals

__all__ = ["HeldSettings", "ProjectTrust", "held_back", "sandbox_mapping", "split_project"]

APPROVALS_FILE = "project-approvals.json"
_NAME = "agent.yaml"


def split_project(
    data: Mapping[str, Any], person: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A project's ``agent.yaml`` settings (``data``) as what applies before the person trusts
    the project, and what waits for that (`held_back`); `agent.setup.trust_table` decides, key
    by key, against the person's own effective configuration ``person`` (as JSON)."""
    if "sandbox" in data:
        data = {**data, "sandbox": sandbox_mapping(data["sandbox"])}
    return split(data, person)


def held_back(data: Mapping[str, Any], person: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a project's ``agent.yaml`` that would loosen what the person set
    (``person``: their effective configuration, as JSON): run tools without asking, leave
    plan mode, enable more tools, loosen the sandbox, stop hiding a secret, send requests
    and the API key to another server, or start programs (MCP servers, hooks).

    A cloned repository is untrusted input; these apply only once the person allowed them.
    """
    return split_project(data, person)[1]


def sandbox_mapping(value: Any) -> Any:
    """``sandbox:`` as a mapping: the scalar shorthand (``sandbox: off``, which YAML reads as
    false, or ``sandbox: read-only``) is the mode."""
    return {"mode": value} if isinstance(value, str) or value is False else value


HELD_KEY = "claude_permissions"
"""Where a project's Claude Code allow rules sit in the held settings: ``{file: [rules]}``."""
HELD_MODE_KEY = "claude_default_mode"
"""Where a project's looser ``defaultMode`` sits in the held settings: ``{file: mode}``."""


def _lines(path: str, value: Any) -> list[str]:
    """One line per held key under ``path`` (dotted), naming it and what it would do."""
    decision = TABLE.get(path)
    if decision is not None and decision.kind == "section" and isinstance(value, Mapping):
        return [line for key, inner in value.items() for line in _lines(f"{path}.{key}", inner)]
    effect = decision.effect if decision is not None else "change a setting"
    if path == "providers" and isinstance(value, Mapping):
        return [f"provider {name}: {_where(entry)} ({effect})" for name, entry in value.items()]
    if path == "mcp_servers" and isinstance(value, Mapping):
        return [f"MCP servers: {', '.join(map(str, value))} ({effect})"]
    if path == "hooks" and isinstance(value, Mapping):
        return [f"hooks for {', '.join(map(str, value))} ({effect})"]
    if path in ("permissions.allow", "permissions.allowed_tools") and isinstance(value, list):
        return [f"permission allow: {rule} ({effect})" for rule in value]
    if path == "sandbox.mode" and value is False:
        value = "off"  # YAML reads an unquoted off as false
    return [f"{path}: {_shown(value)} ({effect})"]


def _shown(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_shown, value)) + "]"
    return str(value)


def _where(entry: Any) -> str:
    where = entry.get("base_url") if isinstance(entry, Mapping) else None
    return str(where or "configured")


@dataclass(frozen=True)
class HeldSettings:
    """Settings of a project file that wait for the person's approval."""

    path: Path
    settings: dict[str, Any]

    @property
    def digest(self) -> str:
        text = json.dumps(self.settings, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def lines(self) -> list[str]:
        """What the settings would do, a line naming each key, for the question and the notice."""
        found: list[str] = []
        for key, value in self.settings.items():
            if key not in (HELD_KEY, HELD_MODE_KEY):
                found += _lines(key, value)
        for name, rules in (self.settings.get(HELD_KEY) or {}).items():
            for rule in rules:
                found.append(f"permission allow: {rule}, from {name} (run it without asking you)")
        for name, mode in (self.settings.get(HELD_MODE_KEY) or {}).items():
            effect = "turn plan mode off" if mode == "default" else "edit files without asking you"
            found.append(f"defaultMode: {mode}, from {name} ({effect})")
        return found

    def describe(self) -> str:
        return f"{self.path} wants to set: " + "; ".join(self.lines())


class ProjectTrust:
    """Answers `agent.setup.config.load_config` about held settings, and remembers approvals.

    Args:
        home: ``AGENT_HOME``, where the approvals are kept (0600).
        workspace: The directory the approvals are for.
    """

    def __init__(self, home: Path, workspace: Path) -> None:
        self._approvals = ProjectApprovals(home, workspace, file_name=APPROVALS_FILE)
        self._allowed: set[str] = set()
        self.held: HeldSettings | None = None
        """What the latest load held back (None: nothing, or it was allowed)."""

    def __call__(self, path: Path, settings: dict[str, Any]) -> bool:
        held = HeldSettings(path, settings)
        if held.digest in self._allowed or self._approvals.allowed_digest(_NAME, held.digest):
            self.held = None
            return True
        self.held = held
        return False

    def allow(self, held: HeldSettings) -> None:
        """Let ``held`` apply from now on, and remember it for this workspace.

        Raises:
            OSError: the approval cannot be saved (it still applies in this process).
        """
        self._allowed.add(held.digest)
        self._approvals.allow_digest(_NAME, held.digest)
