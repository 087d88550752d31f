"""Permission rules in Claude Code's syntax: ``allow``, ``ask`` and ``deny`` lists of
``Tool`` or ``Tool(specifier)``, checked before every tool call (deny, then ask, then allow).

Rules decide whether the person is asked; they never loosen the sandbox or the safety
policy, which run whatever a rule says. The session's permission mode (approval mode, plan
mode) is one `Modes`, changed only by `Modes.switch`, each change a `ModeChanged` event.
"""

from agent.permissions.check import PermissionCheck
from agent.permissions.modes import ModeChanged, Modes
from agent.permissions.rules import Rule, RuleError, RuleSet, Verdict, parse_rule, split_rules
from agent.permissions.settings import PermissionSettings
from agent.permissions.store import ProjectRules, command_prefix

__all__ = [
    "ModeChanged",
    "Modes",
    "PermissionCheck",
    "PermissionSettings",
    "ProjectRules",
    "Rule",
    "RuleError",
    "RuleSet",
    "Verdict",
    "command_prefix",
    "parse_rule",
    "split_rules",
]
