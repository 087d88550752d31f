"""The ``permissions:`` configuration key, in Claude Code's shape.

```yaml
permissions:
  allow: ["run_command(npm test *)", "Bash(git diff:*)"]
  ask: ["run_command(git push *)"]
  deny: ["Read(./.env)", "Edit(secrets/**)", "mcp__github__delete_*"]
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
