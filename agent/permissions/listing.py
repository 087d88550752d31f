"""The rules in force as the person reads them: each with where it came from (``/permissions``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.hooks.settings import CLAUDE_TOOL_NAMES
from agent.permissions.rules import Rule, RuleSet

KNOWN_TOOLS = frozenset(CLAUDE_TOOL_NAMES)
"""Our built-in tools; MCP tools are ``mcp__server__tool``."""


@dataclass(frozen=True)
class ListedRule:
    """One rule, for a listing."""

    kind: str
    """``deny``, ``ask`` or ``allow``."""
    text: str
    origin: str
    """The file or flag it was written in; "" when unknown."""
    note: str = ""
    """Why it does nothing here (a tool this agent does not have), or ""."""
    removable: bool = False
    """Given at the approval prompt, so ``/permissions remove`` can take it back."""


def ignored_because(rule: Rule) -> str:
    """Why ``rule`` can match nothing here ("" when it can): it names a tool we lack."""
    if rule.tool in KNOWN_TOOLS or rule.tool.startswith("mcp__") or "*" in rule.tool:
        return ""
    return f"ignored: no {rule.tool} tool here"


def listed_rules(rules: RuleSet, origin: Callable[[str, str], str]) -> list[ListedRule]:
    """Every rule of ``rules`` in evaluation order (deny, ask, allow), once each."""
    listed: list[ListedRule] = []
    seen: set[tuple[str, str]] = set()
    for kind, group in (("deny", rules.deny), ("ask", rules.ask), ("allow", rules.allow)):
        for rule in group:
            if (kind, rule.text) in seen:
                continue
            seen.add((kind, rule.text))
            listed.append(
                ListedRule(kind, rule.text, origin(kind, rule.text), ignored_because(rule))
            )
    return listed
