"""The ``hooks:`` configuration, in Claude Code's shape, and the matcher.

```yaml
hooks:
  PreToolUse:
    - matcher: Bash|Write
      hooks:
        - {type: command, command: ./check.sh, timeout: 30}
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "Recovery",
    "SubagentStart",
    "SubagentStop",
]
"""Claude Code's events, and our own ``Recovery`` (a fallback, the provider unavailable, a
loop stopped)."""

HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)

CLAUDE_TOOL_NAMES: dict[str, str] = {
    "run_command": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "search": "Grep",
    "list_files": "Glob",
    "skill": "Skill",
    "todo_write": "TodoWrite",
    "command_output": "BashOutput",
    "kill_command": "KillShell",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "task": "Task",
}
"""Our tool names and the Claude Code names hooks know them by (MCP tools are the same in
both: ``mcp__server__tool``)."""

CLAUDE_ALIASES: dict[str, tuple[str, ...]] = {"task": ("Agent",)}
"""Other Claude Code names of our tools (Claude Code renamed Task to Agent)."""

DEFAULT_TIMEOUT = 60.0

_NAMES = re.compile(r"[A-Za-z0-9_\-|]*")


class CommandHook(BaseModel):
    """One command, run with the event's JSON on stdin."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    """Seconds before the command (its whole process group) is killed."""


class HookMatcher(BaseModel):
    """The commands to run for the events ``matcher`` selects.

    ``matcher`` is tool names separated by ``|`` (Claude Code's names or ours), or a regular
    expression that must match the whole name; ``*`` or empty matches everything. For
    ``SessionStart`` it matches the source, for ``PreCompact`` the trigger, for
    ``Notification`` the notification type, for ``Recovery`` the kind; other events ignore it.
    """

    model_config = ConfigDict(extra="forbid")

    matcher: str = ""
    hooks: list[CommandHook]

    @field_validator("matcher")
    @classmethod
    def _check_matcher(cls, value: str) -> str:
        if not _NAMES.fullmatch(value) and value != "*":
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"is not a valid regular expression ({exc})") from None
        return value

    def matches(self, name: str | None) -> bool:
        """Whether this entry applies to ``name`` (a tool name, a source, a kind...).

        A tool is matched by our name and by its Claude Code alias.
        """
        if self.matcher in ("", "*") or name is None:
            return True
        candidates = {name, CLAUDE_TOOL_NAMES.get(name, name), *CLAUDE_ALIASES.get(name, ())}
        if _NAMES.fullmatch(self.matcher):
            return bool(candidates & set(self.matcher.split("|")))
        pattern = re.compile(self.matcher)
        return any(pattern.fullmatch(candidate) for candidate in candidates)


HookSettings = dict[str, list[HookMatcher]]
"""Event name → its matcher entries (the ``hooks:`` key of the configuration)."""


def check_hook_events(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """``value`` if every key is a known event name.

    Raises:
        ValueError: naming the unknown event and the known ones.
    """
    unknown = [str(name) for name in value if name not in HOOK_EVENTS]
    if unknown:
        raise ValueError(f"unknown hook event {unknown[0]!r}; use one of: {', '.join(HOOK_EVENTS)}")
    return value


def merge_hooks(base: HookSettings | Any, top: HookSettings | Any) -> Any:
    """Both files' hooks, each event's entries one after the other (all of them run, as in
    Claude Code, where the user's and the project's hooks add up)."""
    if not isinstance(base, dict) or not isinstance(top, dict):
        return top
    merged = dict(base)
    for event, entries in top.items():
        earlier = merged.get(event)
        both = isinstance(earlier, list) and isinstance(entries, list)
        merged[event] = [*earlier, *entries] if both else entries  # type: ignore[misc]
    return merged


def claude_tool_name(name: str) -> str:
    """The name Claude Code uses for our tool ``name`` (itself when there is none)."""
    return CLAUDE_TOOL_NAMES.get(name, name)
