"""The rules in force as the person reads them: each with where it came from (``/permissions``)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from dataclasses import dataclass

from agent.hooks.settings import CLAUDE_TOOL_NAMES
from agent.permissions.rules import Rule, RuleError, RuleSet, parse_rule

KNOWN_TOOLS = frozenset(CLAUDE_TOOL_NAMES)
"""Our built-in tools; MCP tools are ``mcp__server__tool``."""
CLAUDE_ONLY_TOOLS = frozenset(
    {
        "Artifact", "AskUserQuestion", "CronCreate", "CronDelete",
        "CronList", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree",
        "LS", "LSP", "ListMcpResourcesTool", "MultiEdit", "NotebookEdit",
        "NotebookRead", "PowerShell", "ReadMcpResourceTool", "SlashCommand",
        "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "TodoRead",
        "ToolSearch",
    }
)  # fmt: skip
"""Claude Code's tools this agent lacks. A rule naming one matches nothing here, which
`/permissions` notes; it is not warned about at start, since settings files shared with
Claude Code hold such rules on purpose."""
_NAMES = sorted({*CLAUDE_TOOL_NAMES.values(), *KNOWN_TOOLS, *CLAUDE_ONLY_TOOLS})
"""What a misspelt tool name is compared with: Claude Code's names first in the hint."""


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


def _names_a_tool(rule: Rule) -> bool:
    # MCP tools are known only once their servers run; a pattern may match one of them.
    return rule.tool in KNOWN_TOOLS or rule.tool.startswith("mcp__") or "*" in rule.tool


def did_you_mean(name: str) -> str | None:
    """The tool ``name`` was probably meant to be: the same name in other case, else the
    closest one (``bash`` → ``Bash``, ``run_comand`` → ``run_command``); None if none is close."""
    folded = {known.lower(): known for known in _NAMES}
    if name.lower() in folded:
        return folded[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(folded), n=1, cutoff=0.75)
    return folded[close[0]] if close else None


_NOT_OFFERED = {
    "web_search": "web search is not set up (agent doctor says how)",
    "task": "sub-agents are not available here",
}
"""Why one of our tools is missing from a session, where a reason is known."""


def ignored_because(rule: Rule, offered: Collection[str] | None = None) -> str:
    """Why ``rule`` can match nothing here ("" when it can): it names a tool we lack, or one
    of ours this session does not offer (``offered``: the names it does; None: not known)."""
    if _names_a_tool(rule):
        if offered is None or rule.tool not in KNOWN_TOOLS or rule.tool in offered:
            return ""
        name = CLAUDE_TOOL_NAMES[rule.tool]
        return f"ignored: {_NOT_OFFERED.get(rule.tool, f'no {name} tool in this session')}"
    meant = did_you_mean(rule.tool) if rule.tool not in CLAUDE_ONLY_TOOLS else None
    hint = f"; did you mean {meant}?" if meant else ""
    return f"ignored: no {rule.tool} tool here{hint}"


def unknown_tool_warning(kind: str, text: str, where: str) -> str | None:
    """What to tell the person about the ``kind`` rule ``text`` (written in ``where``: a file,
    a flag) when it names no tool, neither ours nor Claude Code's; None when it names one."""
    try:
        rule = parse_rule(text)
    except RuleError:
        return None  # refused where it is read, with its own message
    if _names_a_tool(rule) or rule.tool in CLAUDE_ONLY_TOOLS:
        return None
    meant = did_you_mean(rule.tool)
    known = "tools: Bash, Read, Edit, Write, Grep, Glob, mcp__server__tool"
    hint = f"did you mean {meant}?" if meant else known
    return (
        f"{where or 'permissions'}: no tool is named {rule.tool!r} ({hint}), so the {kind} "
        f"rule {rule.text!r} matches nothing"
    )


def unknown_tool_warnings(rules: RuleSet, origin: Callable[[str, str], str]) -> list[str]:
    """`unknown_tool_warning` for each rule of ``rules`` (``origin(kind, text)`` says where
    it was written), once each."""
    found = (
        unknown_tool_warning(kind, rule.text, origin(kind, rule.text))
        for kind, group in (("deny", rules.deny), ("ask", rules.ask), ("allow", rules.allow))
        for rule in group
    )
    return list(dict.fromkeys(warning for warning in found if warning))


def listed_rules(
    rules: RuleSet, origin: Callable[[str, str], str], offered: Collection[str] | None = None
) -> list[ListedRule]:
    """Every rule of ``rules`` in evaluation order (deny, ask, allow), once each; a rule for
    a tool not in ``offered`` (when given) is noted as ignored."""
    listed: list[ListedRule] = []
    seen: set[tuple[str, str]] = set()
    for kind, group in (("deny", rules.deny), ("ask", rules.ask), ("allow", rules.allow)):
        for rule in group:
            if (kind, rule.text) in seen:
                continue
            seen.add((kind, rule.text))
            listed.append(
                ListedRule(kind, rule.text, origin(kind, rule.text), ignored_because(rule, offered))
            )
    return listed
