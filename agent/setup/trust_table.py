"""What a repository's own files may set before the person trusts it: one decision for every
key of `agent.setup.config.Config`, and how a project's value compares to the person's.

The person's value of a key is what their own configuration makes it: their config file,
``~/.claude/settings.json``'s mode, the environment and the flags (everything but the
project's files), with the defaults under them. Each key is one of:

- **tunes**: it only tunes the agent (limits, timeouts, retries); a project's value applies.
- **tighten**: a comparator tells whether the project's value is as strict as the person's
  (applies at once) or looser (held back until the person trusts the project).
- **held**: any value that differs from the person's is held back until trusted (it names a
  program to start, a server to talk to, a rule that lets calls run without asking).
- **section**: decided key by key below it.

A key `TABLE` does not name is held back (`split`), and ``tests/agent/test_trust_table.py``
fails for a `Config` key that has no row here.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter

__all__ = ["NOTHING", "TABLE", "Decision", "looser_mode", "shell_env_split", "split"]


class _Nothing:
    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()
"""A comparator's answer when nothing of the project's value may apply before trust."""

Comparator = Callable[[Any, Any], Any]
"""``(project value, person's value)`` → what of the project's value applies untrusted: the
value itself (it tightens, or changes nothing), `NOTHING` (it loosens: held back whole), or
another value (that part applies, the project's value waits for trust)."""


@dataclass(frozen=True)
class Decision:
    """What a project file may do with one key before it is trusted."""

    kind: Literal["tunes", "tighten", "held", "section"]
    effect: str = ""
    """What a held-back value would do, for the person: ``loosen the command sandbox``."""
    compare: Comparator | None = None


TUNES = Decision("tunes")
SECTION = Decision("section")


def held(effect: str) -> Decision:
    return Decision("held", effect)


def tighten(compare: Comparator, effect: str) -> Decision:
    return Decision("tighten", effect, compare)


def ordered(*values: Any, kind: type = str) -> Comparator:
    """Values from the tightest to the loosest; a project's may be as tight or tighter."""
    adapter: TypeAdapter[Any] = TypeAdapter(kind)

    def rank(value: Any) -> int:
        try:
            return values.index(adapter.validate_python(value))
        except (ValueError, TypeError):
            return len(values)  # unknown: treated as the loosest

    def compare(project: Any, person: Any) -> Any:
        return project if rank(project) <= rank(person) else NOTHING

    return compare


def _sandbox_mode(value: Any) -> Any:
    return "off" if value is False else value  # YAML reads an unquoted off as false


def add_only(project: Any, person: Any) -> Any:
    """A list a project may only add to: the person's entries stay, the project's are added."""
    mine, theirs = list(person or []), list(project or [])
    if all(entry in theirs for entry in mine):
        return project
    return [*mine, *(entry for entry in theirs if entry not in mine)]


def subset(project: Any, person: Any) -> Any:
    """A list a project may only narrow: each of its entries is one of the person's."""
    mine = list(person or [])
    return project if all(entry in mine for entry in project or []) else NOTHING


def _covered(name: str, patterns: Sequence[str]) -> bool:
    """``name`` (a tool name or a ``*`` pattern) names only tools ``patterns`` allow."""
    wild = "*?["
    for pattern in patterns:
        prefix = pattern[:-1]  # mcp__github__* covers mcp__github__pr_*, a narrower prefix
        narrower = pattern.endswith("*") and not any(c in prefix for c in wild)
        if (
            name == pattern
            or (not any(c in name for c in wild) and fnmatch.fnmatchcase(name, pattern))
            or (narrower and name.startswith(prefix))
        ):
            return True
    return False


def tool_subset(project: Any, person: Any) -> Any:
    """``tools.enabled``: null is every tool; a project may only name fewer."""
    if person is None:
        return project
    if project is None:
        return NOTHING
    return project if all(_covered(name, person) for name in project) else NOTHING


def _path(text: str) -> str:
    return os.path.realpath(os.path.expanduser(text))  # a link under an allowed path: its target


def path_subset(project: Any, person: Any) -> Any:
    """``sandbox.writable_paths``: each of the project's is one of the person's, or under one."""
    mine = [_path(entry) for entry in person or []]
    for entry in project or []:
        path = _path(str(entry))
        if not any(path == top or path.startswith(top.rstrip(os.sep) + os.sep) for top in mine):
            return NOTHING
    return project


def shell_env_split(project: Any, person: Any) -> Any:
    """``shell_env`` (the environment commands and MCP servers get): a project may only narrow
    it. ``inherit`` only towards ``none``, ``exclude`` only adds, ``include_only`` only a subset
    of the person's (empty: every name), ``ignore_default_excludes`` only off, ``set`` waits
    for trust."""
    project, person = dict(project or {}), dict(person or {})
    applied: dict[str, Any] = {}
    inherit = ordered("none", "core", "all")(project.get("inherit"), person.get("inherit", "all"))
    if "inherit" in project and inherit is not NOTHING:
        applied["inherit"] = inherit
    if "exclude" in project:
        applied["exclude"] = add_only(project["exclude"], person.get("exclude"))
    if "include_only" in project:  # empty: every name
        narrower = bool(project["include_only"]) and (
            not person.get("include_only")
            or subset(project["include_only"], person["include_only"]) is not NOTHING
        )
        if narrower:
            applied["include_only"] = project["include_only"]
    if "ignore_default_excludes" in project:
        passes = ordered(False, True, kind=bool)(
            project["ignore_default_excludes"], person.get("ignore_default_excludes", False)
        )
        if passes is not NOTHING:
            applied["ignore_default_excludes"] = passes
    if person.get("set") == project.get("set") and "set" in project:
        applied["set"] = project["set"]
    return project if applied == project else (applied or NOTHING)


_SANDBOX = "loosen the command sandbox"
_ALLOWS = "run it without asking you"


def _tuned(prefix: str, names: str) -> dict[str, Decision]:
    return {prefix + name: TUNES for name in names.split()}


TABLE: dict[str, Decision] = {
    # Where requests and the API key go, and which programs start as the person.
    "providers": held("send requests and your API key there"),
    "model": held("use a provider this file defines"),
    "fallback_models": held("use a provider this file defines"),
    "small_model": held("use a provider this file defines"),
    "mcp_servers": held("start programs"),
    "hooks": held("run commands as you, outside the sandbox"),
    "recovery": SECTION,
    "recovery.shared": SECTION,
    "recovery.shared.url": held("tell a server it names about your requests"),
    "telemetry": held("send what this agent does to a telemetry collector"),
    # Searches carry the work's words, and a key from the person's environment goes along.
    "web_search": held("send your searches, with the key it names, to a server it chooses"),
    # What runs without asking, and how confined it is.
    "approval": tighten(ordered("ask", "auto-edit", "full-auto"), "run tools without asking you"),
    "plan_mode": tighten(ordered(True, False, kind=bool), "turn plan mode off"),
    "tools": SECTION,
    "tools.enabled": tighten(tool_subset, "let the model call tools you did not enable"),
    "sandbox": SECTION,
    "sandbox.mode": tighten(
        lambda project, person: ordered("read-only", "workspace-write", "off")(
            _sandbox_mode(project), person
        ),
        _SANDBOX,
    ),
    "sandbox.network": tighten(ordered(False, True, kind=bool), _SANDBOX),
    "sandbox.writable_paths": tighten(path_subset, _SANDBOX),
    "sandbox.allow_protected_writes": tighten(
        ordered(False, True, kind=bool), "let file tools change .git and agent settings"
    ),
    "permissions": SECTION,
    "permissions.allow": tighten(subset, _ALLOWS),
    "permissions.allowed_tools": tighten(subset, _ALLOWS),
    "permissions.ask": TUNES,  # rules add up across files: a project's only adds questions
    "permissions.deny": TUNES,  # ... and refusals
    "permissions.disallowed_tools": TUNES,
    # A server's readOnlyHint is its own claim, and a repository's word is no better.
    "permissions.read_only_tools": held("let these MCP tools run in plan mode"),
    # What commands and MCP servers see of the person's environment (API keys withheld).
    "shell_env": tighten(shell_env_split, "pass more of your environment to commands"),
    # What is hidden from the model, sessions and logs.
    "sessions": SECTION,
    "sessions.redact_env": tighten(add_only, "stop hiding these variables' values"),
    # Only tune the agent.
    **_tuned("", "models max_tokens max_steps turn_timeout request_timeout stream_idle_timeout"),
    "local": TUNES,
    "compaction": TUNES,
    "subagents": TUNES,
    **_tuned("sessions.", "fsync hash_limit_bytes"),
    **_tuned(
        "tools.",
        "max_output_chars command_timeout max_command_timeout file_tool_timeout max_retries "
        "retry_backoff read_max_lines max_list_entries max_search_matches repeated_failure_warn "
        "repeated_failure_limit repeated_call_warn repeated_call_limit snapshot_max_file_bytes "
        "snapshot_max_total_bytes snapshot_max_files checkpoint_max_age_days",
    ),
    **_tuned(
        "recovery.",
        "enabled max_attempts base_backoff probe_backoff overload_backoff max_backoff "
        "max_total_wait max_retry_wait rate_limit_floor budget_capacity retry_cost "
        "timeout_cost success_refill breaker_threshold breaker_cooldown "
        "overload_fallback_after background_overload_fallback_after escalate_max_tokens "
        "default_max_tokens chaos",
    ),
    **_tuned("recovery.shared.", "backend requests_per_minute tokens_per_minute max_concurrent"),
}
"""Every key of `Config`, by its dotted path.

A key added to `Config` gets its row here."""

_NAMES_PROVIDERS = ("model", "fallback_models", "small_model")


def split(
    data: Mapping[str, Any], person: Mapping[str, Any], prefix: str = ""
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A project file's settings (``data``) as what applies before trust and what is held
    back, compared to the person's (``person``: their effective configuration, as JSON)."""
    applied: dict[str, Any] = {}
    waiting: dict[str, Any] = {}
    for key, value in data.items():
        path = prefix + key
        decision = TABLE.get(path, held("change a setting this agent does not know"))
        mine = person.get(key) if isinstance(person, Mapping) else None
        if path in _NAMES_PROVIDERS:
            defined = set(data.get("providers") or ())
            refs = value if isinstance(value, list) else [value]
            named = any(isinstance(ref, str) and ref.partition(":")[0] in defined for ref in refs)
            (waiting if named else applied)[key] = value
        elif decision.kind == "section" and isinstance(value, Mapping):
            inner, held_inner = split(value, mine if isinstance(mine, Mapping) else {}, path + ".")
            applied[key] = inner
            if held_inner:
                waiting[key] = held_inner
        elif decision.kind == "tunes":
            applied[key] = value
        elif decision.kind == "held" or decision.compare is None:
            (waiting if value and value != mine else applied)[key] = value
        else:
            kept = decision.compare(value, mine)
            if kept is not NOTHING:
                applied[key] = kept
            if kept is NOTHING or kept != value:
                waiting[key] = value
    return applied, waiting


def looser_mode(project: Mapping[str, Any], person: Mapping[str, Any]) -> bool:
    """Whether mode settings (``approval``, ``plan_mode``) loosen the person's."""
    return any(
        key in project
        and TABLE[key].compare is not None
        and TABLE[key].compare(project[key], person.get(key)) is NOTHING  # type: ignore[misc]
        for key in ("approval", "plan_mode")
    )
