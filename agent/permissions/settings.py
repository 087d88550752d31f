"""The ``permissions:`` configuration key, in Claude Code's shape.

```yaml
permissions:
  allow: ["run_command(npm test *)", "Bash(git diff:*)"]
  ask: ["run_command(git push *)"]
  deny: ["Read(./.env)", "Edit(secrets/**)", "mcp__github__delete_*"]
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from agent.permissions.claude_files import origin_key
from agent.permissions.listing import unknown_tool_warnings
from agent.permissions.rules import RuleSet, parse_rule, split_rules

_LISTS = ("allow", "ask", "deny", "allowed_tools", "disallowed_tools")


class PermissionSettings(BaseModel):
    """Rules deciding which tool calls run without asking, are asked about, or are refused."""

    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    """Run without asking (never past the sandbox or the safety policy)."""
    ask: list[str] = Field(default_factory=list)
    """Ask the person, whatever the approval mode; refused when nobody can be asked."""
    deny: list[str] = Field(default_factory=list)
    """Refuse, in every approval mode (``--yes`` too)."""
    allowed_tools: list[str] = Field(default_factory=list)
    """``--allowedTools``: more allow rules, for this run."""
    disallowed_tools: list[str] = Field(default_factory=list)
    """``--disallowedTools``: more deny rules, for this run."""
    read_only_tools: list[str] = Field(default_factory=list)
    """MCP tools the person vouches only read (names or ``*`` patterns): they run in plan
    mode. A server's own ``readOnlyHint`` is its claim, not the person's; only the person's
    own config may set this."""

    _origins: dict[str, str] = PrivateAttr(default_factory=dict)
    _warnings: list[str] = PrivateAttr(default_factory=list)
    _waiting: list[str] = PrivateAttr(default_factory=list)
    _mode_note: str | None = PrivateAttr(default=None)

    def with_origins(
        self,
        origins: Mapping[str, str],
        warnings: Sequence[str] = (),
        waiting: Sequence[str] = (),
        mode_note: str | None = None,
    ) -> PermissionSettings:
        """These settings, knowing where each rule came from (`origin_key` → a file or
        flag), what could not be read in Claude Code's settings files, which of a project's
        rules wait for its trust, and how a Claude Code ``defaultMode`` set the mode, if one did."""
        self._origins = dict(origins)
        self._warnings = list(warnings)
        self._waiting = list(waiting)
        self._mode_note = mode_note
        return self

    @property
    def mode_note(self) -> str | None:
        """Which Claude Code ``defaultMode`` set the mode, and what it does; None: ours did."""
        return self._mode_note

    @property
    def waiting(self) -> list[str]:
        """A project's allow rules held back until the project is trusted, one line each."""
        return list(self._waiting)

    @property
    def warnings(self) -> list[str]:
        """One line per problem in a Claude Code settings file (its other rules still hold),
        then one per rule naming no tool (``--disallowedTools bash``), wherever written."""
        return [*self._warnings, *unknown_tool_warnings(self.rules(), self.origin)]

    def origin(self, kind: str, text: str) -> str:
        """Where the ``kind`` rule ``text`` was written; "" when unknown."""
        return self._origins.get(origin_key(kind, text), "")

    @field_validator("read_only_tools")
    @classmethod
    def _check_tool_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name.startswith("mcp__"):
                raise ValueError(
                    f"{name!r} is not an MCP tool name; write mcp__<server>__<tool>, "
                    "* as a wildcard (mcp__github__get_*)"
                )
        return value

    @field_validator(*_LISTS)
    @classmethod
    def _check_rules(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_rule(text)  # RuleError is a ValueError: pydantic names the key
        return value

    def rules(self, remembered: Sequence[str] = ()) -> RuleSet:
        """The rules in force, with ``remembered`` allow rules (`ProjectRules`) added."""
        return RuleSet.of(
            deny=[*self.deny, *split_rules(self.disallowed_tools)],
            ask=list(self.ask),
            allow=[*self.allow, *split_rules(self.allowed_tools), *remembered],
        )


_FLAGS = {
    "allowed_tools": ("allow", "--allowedTools"),
    "disallowed_tools": ("deny", "--disallowedTools"),
}


def rule_origins(permissions: Any, label: str | None) -> dict[str, str]:
    """Each rule of one layer's ``permissions:`` mapping, keyed by `origin_key`, → ``label``
    (None: the command line, each list named by its flag)."""
    origins: dict[str, str] = {}
    for key, values in permissions.items() if isinstance(permissions, dict) else ():
        kind, flag = _FLAGS.get(key, (key, key))
        texts = (
            [value for value in values if isinstance(value, str)]
            if isinstance(values, list)
            else []
        )
        for text in split_rules(texts) if key in _FLAGS else texts:
            origins.setdefault(origin_key(kind, text), label or flag)
    return origins


def merge_permissions(base: Any, top: Any) -> Any:
    """Both files' rules, list by list (Claude Code adds the rules of every scope up, so a
    project file cannot drop the person's own deny rules)."""
    if not isinstance(base, dict) or not isinstance(top, dict):
        return top
    merged = dict(base)
    for key, rules in top.items():
        earlier = merged.get(key)
        both = isinstance(earlier, list) and isinstance(rules, list)
        merged[key] = [*earlier, *rules] if both else rules  # type: ignore[misc]
    return merged
