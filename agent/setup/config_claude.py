"""Claude Code's permission rules and mode as one more configuration layer (`load_config`).

The person's ``~/.claude/settings.json`` applies as it is: its mode is part of the person's
configuration. The project's ``.claude/settings.json`` and ``.claude/settings.local.json`` are
the repository's: their allow rules, and a mode looser than the person's (``default`` over
the person's plan mode, ``acceptEdits`` over ``ask``), are held back with the rest of what the
project holds (`agent.setup.trust`), asked about in the same question as ``agent.yaml``'s,
and apply once the person trusts the project; their deny and ask rules, and a mode as strict
as the person's, always apply.

``defaultMode`` stands in for ``approval`` and ``plan_mode`` only where our own files, the
environment and the flags set neither: what is written for this agent wins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent.permissions.claude_files import ClaudeRules
from agent.permissions.modes import mode_settings
from agent.permissions.settings import merge_permissions
from agent.setup.trust import HELD_KEY, HELD_MODE_KEY
from agent.setup.trust_table import looser_mode

OWN_MODE_KEYS = ("approval", "plan_mode")
MODE_MEANINGS = {
    "default": "edits and commands are asked about",
    "acceptEdits": "file edits run without asking; commands are asked about",
    "plan": "plan mode, read-only until you approve a plan",
    "bypassPermissions": "tool calls run without asking (the sandbox and safety policy hold)",
}


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
        self._person: Mapping[str, Any] = {}
        self._own_mode = self._project_sets_mode = False
        self._own_waiting: list[str] = []
        self.origins: dict[str, str] = {}
        """Every rule of every layer (`origin_key`) → where it is written."""

    def person_mode(self, *layers: Mapping[str, Any]) -> dict[str, Any]:
        """The person's ``~/.claude/settings.json`` mode as our settings, unless one of their
        own ``layers`` (config file, environment, flags) sets the mode: part of their config."""
        self._own_mode = _sets_mode(*layers)
        found = None if self._own_mode else self.rules.mode_of(project=False)
        return mode_settings(found[0]) if found else {}

    def settle(self, person: Mapping[str, Any], project: Mapping[str, Any]) -> None:
        """What the project's mode is compared to: the person's effective configuration (as
        JSON); and whether the project's ``agent.yaml`` sets the mode itself (it then wins)."""
        self._person = person
        self._project_sets_mode = _sets_mode(project)

    def held(self) -> dict[str, Any]:
        """The project files' allow rules and looser mode as held settings (empty: none)."""
        held: dict[str, Any] = {HELD_KEY: rules} if (rules := self.rules.held()) else {}
        if (mode := self._project_mode()) is not None and mode[2]:
            held[HELD_MODE_KEY] = {mode[1]: mode[0]}
        return held

    def ask_with(self, path: Path, held: dict[str, Any]) -> bool:
        """Ask about what ``agent.yaml`` (``path``) holds back and these files' allow rules
        in one question: one answer for the project."""
        assert self._trust is not None
        self._answer = self._trust(path, held | self.held())
        if not self._answer:
            self._own_waiting = _own_waiting(held, path.name)
        return self._answer

    def waiting(self) -> list[str]:
        """The project files' allow rules and mode not in force: the project is not trusted."""
        if self._answer is not False:
            return []
        lines = self._own_waiting + [
            f"allow {rule} ({label}) waits for `agent trust` here"
            for label, rules in self.rules.held().items()
            for rule in rules
        ]
        if (mode := self._project_mode()) is not None and mode[2]:
            lines.append(f"defaultMode {mode[0]} ({mode[1]}) waits for `agent trust` here")
        return lines

    def mode(self, project_layer: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
        """Claude Code's ``defaultMode`` as our settings, and a line saying so: the project's
        (when it only tightens, or the project is trusted), else the person's; nothing when
        our own files, the environment or the flags set the mode. No line where the
        project's ``agent.yaml`` as applied (``project_layer``) sets what the mode would.
        Call after `add_to`, which settles whether the project is trusted."""
        project = self._project_mode()
        if project is not None and (not project[2] or self._answer is True):
            mode, label = project[0], project[1]
            return _full_mode(mode), f"defaultMode {mode} from {label}: {MODE_MEANINGS[mode]}"
        found = None if self._own_mode else self.rules.mode_of(project=False)
        if found is None:
            return {}, None
        mode, label = found
        settings = mode_settings(mode)
        if any(key in project_layer for key in settings):
            return settings, None
        return settings, f"defaultMode {mode} from {label}: {MODE_MEANINGS[mode]}"

    def _project_mode(self) -> tuple[str, str, bool] | None:
        """The project files' mode in play (mode, label, whether it loosens the person's)."""
        if self._own_mode or self._project_sets_mode:
            return None
        found = self.rules.mode_of(project=True)
        if found is None:
            return None
        return found[0], found[1], looser_mode(_full_mode(found[0]), self._person)

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


def _own_waiting(held: Mapping[str, Any], name: str) -> list[str]:
    """What ``agent.yaml`` (``name``) holds back of the mode and the allow rules, for
    ``/permissions``, in the words of `ClaudeLayer.waiting`."""
    lines = [
        f"{key}: {str(held[key]).lower()} ({name}) waits for `agent trust` here"
        for key in OWN_MODE_KEYS
        if key in held
    ]
    rules = held.get("permissions") or {}
    for rule in [*rules.get("allow", []), *rules.get("allowed_tools", [])]:
        lines.append(f"allow {rule} ({name}) waits for `agent trust` here")
    return lines


def _sets_mode(*layers: Mapping[str, Any]) -> bool:
    return any(key in layer for layer in layers for key in OWN_MODE_KEYS)


def _full_mode(mode_id: str) -> dict[str, Any]:
    """A project file's mode as both our settings: it replaces the person's, plan mode too."""
    settings: dict[str, Any] = dict(mode_settings(mode_id))
    return settings if mode_id == "plan" else settings | {"plan_mode": False}


def shown_path(path: Path, environ: Mapping[str, str]) -> str:
    """``path`` as the person knows it: ``~/...`` under their home, else as it is."""
    home = Path(environ.get("HOME", "~")).expanduser()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return path.name if path.name == "agent.yaml" else str(path)
