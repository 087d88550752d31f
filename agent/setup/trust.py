"""Which of a repository's ``agent.yaml`` settings the person allowed in this workspace (and
the allow rules of its Claude Code settings files, asked about with them).

A cloned repository is untrusted input, and its ``agent.yaml`` is read on every start there.
Most keys only tune the agent; those `held_back` names could turn it against the
person (run commands without asking, unconfine them, send the API key to another server,
start programs), so they apply only once the person allowed them: the REPL asks at start,
``agent trust`` allows them from a shell, and until then the agent runs without them and says
so. An approval holds for the exact settings (a digest of them); a change is asked about again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.guard.sandbox import SandboxMode
from tools.hooks import ApprovalMode
from tools.mcp import ProjectApprovals

__all__ = ["HeldSettings", "ProjectTrust", "held_back", "sandbox_mapping", "without"]

APPROVALS_FILE = "project-approvals.json"
_NAME = "agent.yaml"


def held_back(data: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a project's ``agent.yaml`` that would let the repository act against
    the person: run commands without asking (``approval`` other than ``ask``), loosen the
    sandbox, send requests and their API key to another server (``providers``, and the
    ``model``/``fallback_models`` naming those), or start programs (``mcp_servers``, and
    ``hooks``, which run as the person outside the sandbox), or let commands and edits run
    without asking (``permissions`` allow rules; deny and ask rules only tighten).

    A cloned repository is untrusted input; these apply only once the person allowed them.
    """
    held: dict[str, Any] = {}
    if data.get("approval") not in (None, ApprovalMode.ASK):
        held["approval"] = data["approval"]
    sandbox = sandbox_mapping(data.get("sandbox"))
    if isinstance(sandbox, dict):
        looser = {key: value for key, value in sandbox.items() if _loosens(key, value)}
        if looser:
            held["sandbox"] = looser
    for key in ("providers", "mcp_servers", "hooks"):
        if data.get(key):
            held[key] = data[key]
    permissions = data.get("permissions")
    if isinstance(permissions, dict) and (
        permissions.get("allow") or permissions.get("allowed_tools")
    ):
        held["permissions"] = {
            k: permissions[k] for k in ("allow", "allowed_tools") if k in permissions
        }
    defined = set(held.get("providers") or ())
    refs = [data.get("model"), *(data.get("fallback_models") or [])]
    if any(isinstance(ref, str) and ref.partition(":")[0] in defined for ref in refs):
        held |= {key: data[key] for key in ("model", "fallback_models") if key in data}
    return held


def sandbox_mapping(value: Any) -> Any:
    """``sandbox:`` as a mapping: the scalar shorthand (``sandbox: off``, which YAML reads as
    false, or ``sandbox: read-only``) is the mode."""
    return {"mode": value} if isinstance(value, str) or value is False else value


def _loosens(key: str, value: Any) -> bool:
    if key == "mode":
        return value not in (SandboxMode.WORKSPACE_WRITE, SandboxMode.READ_ONLY)
    if key in ("network", "allow_protected_writes"):
        return value is True
    return key == "writable_paths" and bool(value)


def without(data: dict[str, Any], held: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a project file's settings) without what `held_back` found in it."""
    partial = ("sandbox", "permissions")  # only the loosening part of these is held back
    kept = {key: value for key, value in data.items() if key not in held or key in partial}
    for key in partial:
        if key in held:
            section = sandbox_mapping(data[key]) if key == "sandbox" else data[key]
            kept[key] = {k: v for k, v in section.items() if k not in held[key]}
    return kept


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
        """What the settings would do, a line each, for the question and the notice."""
        found: list[str] = []
        held = self.settings
        if "approval" in held:
            found.append(f"approval: {held['approval']} (run tools without asking you)")
        for key, value in (held.get("sandbox") or {}).items():
            shown = SandboxMode.OFF if value is False and key == "mode" else value  # YAML: off
            found.append(f"sandbox.{key}: {shown} (loosen the command sandbox)")
        for name, entry in (held.get("providers") or {}).items():
            where = entry.get("base_url") if isinstance(entry, dict) else None
            found.append(f"provider {name}: {where or 'configured'} (send requests there)")
        for key in ("model", "fallback_models"):
            if key in held:
                found.append(f"{key}: {held[key]}")
        if servers := held.get("mcp_servers"):
            found.append(f"MCP servers: {', '.join(map(str, servers))} (start programs)")
        for rule in (held.get("permissions") or {}).get("allow") or []:
            found.append(f"permission allow: {rule} (run it without asking you)")
        for rule in (held.get("permissions") or {}).get("allowed_tools") or []:
            found.append(f"permission allow: {rule} (run it without asking you)")
        for name, rules in (held.get("claude_permissions") or {}).items():
            for rule in rules:
                found.append(f"permission allow: {rule}, from {name} (run it without asking you)")
        for name, mode in (held.get("claude_default_mode") or {}).items():
            found.append(f"defaultMode: {mode}, from {name} (edit files without asking you)")
        if hooks := held.get("hooks"):
            names = ", ".join(map(str, hooks))
            found.append(f"hooks for {names} (run commands as you, outside the sandbox)")
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
