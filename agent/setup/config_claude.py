"""Claude Code's permission rules as one more configuration layer (`load_config`).

The person's ``~/.claude/settings.json`` applies as it is. The project's
``.claude/settings.json`` and ``.claude/settings.local.json`` are the repository's: their
allow rules are held back with the rest of what the project holds (`agent.setup.trust`),
asked about in the same question as ``agent.yaml``'s, and apply once the person trusts the
project; their deny and ask rules always apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent.permissions.claude_files import ClaudeRules
from agent.permissions.settings import merge_permissions

HELD_KEY = "claude_permissions"
"""Where a project's Claude Code allow rules sit in the held settings: ``{file: [rules]}``."""


class ClaudeLayer:
    """Claude Code's rules for one load: which wait for trust, and where every rule came from.

    Args:
        rules: What `read_claude_rules` found.
        trust: The project trust check of `load_config` (None: every file is vouched for).
    """

    def __init__(
        self, rules: ClaudeRules, trust: Callable[[Path, dict[str, Any]], bool] | None
    ) -> None:
        self.rules = rules
        self._trust = trust
        self._answer: bool | None = None if trust is not None else True
        self.origins: dict[str, str] = {}
        """Every rule of every layer (`origin_key`) → where it is written."""

    def held(self) -> dict[str, Any]:
        """The project files' allow rules as held settings; empty when there are none."""
        held = self.rules.held()
        return {HELD_KEY: held} if held else {}

    def ask_with(self, path: Path, held: dict[str, Any]) -> bool:
        """Ask about what ``agent.yaml`` (``path``) holds back and these files' allow rules
        in one question: one answer for the project."""
        assert self._trust is not None
        self._answer = self._trust(path, held | self.held())
        return self._answer

    def waiting(self) -> list[str]:
        """The project files' allow rules not in force because the project is not trusted."""
        if self._answer is not False:
            return []
        return [
            f"allow {rule} ({label}) waits for `agent trust` here"
            for label, rules in self.rules.held().items()
            for rule in rules
        ]

    def add_to(self, permissions: Any) -> Any:
        """``permissions`` (the merged files' mapping) with Claude Code's rules added."""
        held = self.held()
        if self._answer is None:
            self._answer = True
            if held and self._trust is not None:
                first = next(item.path for item in self.rules.files if item.scope != "user")
                self._answer = self._trust(first, held)
        added, origins = self.rules.layer(trusted=self._answer)
        for key, label in origins.items():
            self.origins.setdefault(key, label)
        if not any(added.values()):
            return permissions
        return merge_permissions(permissions if permissions is not None else {}, added)


def shown_path(path: Path, environ: Mapping[str, str]) -> str:
    """``path`` as the person knows it: ``~/...`` under their home, else as it is."""
    home = Path(environ.get("HOME", "~")).expanduser()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return path.name if path.name == "agent.yaml" else str(path)
