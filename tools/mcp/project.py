"""A project's ``.mcp.json``: the servers it adds, and which of them the person allowed.

The file is the format Claude Code users keep in their repositories::

    {"mcpServers": {"db": {"command": "uvx", "args": ["mcp-db"], "env": {"DSN": "${DSN}"}},
                    "tracker": {"type": "http", "url": "https://...", "headers": {...}}}}

A repository is untrusted input: a server from it runs a program on the person's machine,
so it starts only after the person allowed that exact definition once. The approvals are
kept in ``$AGENT_HOME/mcp-approvals.json`` (0600) by workspace and a digest of the entry; a
changed entry is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tools.base import ToolError
from tools.fileio import read_whole
from tools.mcp.settings import SERVER_NAME, McpServerSettings

PROJECT_FILE = ".mcp.json"
APPROVALS_FILE = "mcp-approvals.json"
_MAX_FILE_BYTES = 1 << 20


@dataclass
class ProjectServers:
    """What a project's ``.mcp.json`` holds: valid servers and the entries that are not."""

    servers: dict[str, McpServerSettings] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_project_servers(workspace: Path) -> ProjectServers:
    """The servers in ``workspace/.mcp.json`` (none if it is missing); never raises."""
    path = workspace / PROJECT_FILE
    found = ProjectServers()
    try:
        if path.is_symlink() or not path.is_file():
            return found
        # Regular files only, opened without blocking: a FIFO swapped in cannot hang start-up.
        data = json.loads(read_whole(path, PROJECT_FILE, _MAX_FILE_BYTES).decode("utf-8"))
    except ToolError as error:
        found.problems.append(f"{error.message}; fix or remove it")
        return found
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        found.problems.append(f"{PROJECT_FILE} cannot be read ({error}); fix or remove it")
        return found
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        found.problems.append(f'{PROJECT_FILE} has no "mcpServers" object; its servers are ignored')
        return found
    for name, entry in entries.items():
        problem = _add_entry(found, str(name), entry)
        if problem:
            found.problems.append(f"{PROJECT_FILE}: server {name!r} {problem}; it is ignored")
    return found


def _add_entry(found: ProjectServers, name: str, entry: Any) -> str | None:
    if not SERVER_NAME.match(name):
        return "has a name other than letters, digits, _ and - (at most 32)"
    if not isinstance(entry, dict):
        return "is not an object"
    kind = entry.get("type", "stdio")
    if kind == "sse":
        return "uses the old SSE transport, which is not supported (use type http)"
    if kind not in ("stdio", "http", "streamable-http"):
        return f"has an unknown type {kind!r}"
    keys = ("command", "args", "env", "cwd") if kind == "stdio" else ("url", "headers")
    try:
        found.servers[name] = McpServerSettings.model_validate(
            {key: entry[key] for key in keys if key in entry}
        )
    except ValidationError as error:
        return f"is not valid ({error.errors()[0]['msg']})"
    return None


def digest(settings: McpServerSettings) -> str:
    """A digest of what a server entry runs or reaches (its definition, unexpanded)."""
    text = json.dumps(settings.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class ProjectApprovals:
    """What the person allowed a project to do, per workspace: a digest of each thing as it
    was when allowed; stored 0600 under AGENT_HOME (``file_name``, one per kind of thing).
    """

    def __init__(self, home: Path, workspace: Path, file_name: str = APPROVALS_FILE) -> None:
        self._path = home / file_name
        self._workspace = str(workspace.resolve())

    def allowed(self, name: str, settings: McpServerSettings) -> bool:
        """Whether the person allowed this exact definition of ``name`` in this workspace."""
        return self.allowed_digest(name, digest(settings))

    def allow(self, name: str, settings: McpServerSettings) -> None:
        """Remember that the person allowed ``name`` as defined now.

        Raises:
            OSError: the file cannot be written.
        """
        self.allow_digest(name, digest(settings))

    def allowed_digest(self, name: str, value: str) -> bool:
        """Whether ``name`` was allowed in this workspace when its digest was ``value``."""
        return self._load().get(self._workspace, {}).get(name) == value

    def allow_digest(self, name: str, value: str) -> None:
        """Remember that ``name`` is allowed while its digest is ``value``.

        Raises:
            OSError: the file cannot be written.
        """
        data = self._load()
        data.setdefault(self._workspace, {})[name] = value
        self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self._path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(temporary, self._path)

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(read_whole(self._path, self._path.name, _MAX_FILE_BYTES))
        except (ToolError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)}
