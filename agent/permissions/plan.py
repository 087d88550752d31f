"""Plan mode: what the model may do while it only plans (read, list, search, look).

Edits are refused, and so are MCP tools, unless the person marked them read-only in their own
config (``permissions.read_only_tools``): a server's ``readOnlyHint`` is only its claim. A
command runs only when every program it runs only reads, as `agent.permissions.read_only`
decides from the command's analysis (no option that writes, no redirection, no program named
by a path), and then in a read-only sandbox with the network off (`PlanAwareSandbox`), so
whatever the list misses fails too. The person approves the plan before anything is changed.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from agent.permissions.read_only import not_read_only
from tools.guard import landlock
from tools.guard.sandbox import Sandbox, SandboxMode, namespaces_missing

MCP_PREFIX = "mcp__"

INSTRUCTION = (
    "[Plan mode is on: the person wants a plan, not changes. Investigate with read-only tools "
    "(read_file, list_files, search, read-only commands), then answer with a concise, "
    "numbered plan of the changes you would make. Do not edit files or run commands that "
    "change anything; the person approves the plan first.]"
)
GO_AHEAD = "The plan is approved. Carry it out now."
PLAN_DENIED_HINT = (
    "[plan mode: commands run read-only and offline until the person approves the plan, so "
    "this one could not write or connect. Do not work around it: finish investigating and "
    "put the change in the plan.]"
)


def planned(prompt: str, plan_mode: bool) -> str:
    """``prompt``, asking for a plan first while plan mode is on."""
    return f"{INSTRUCTION}\n\n{prompt}" if plan_mode and prompt.strip() else prompt


def plan_refusal(
    tool: str, kind: str, command: str | None, read_only_tools: Sequence[str] = ()
) -> str | None:
    """Why plan mode refuses this call, or None when it may run.

    An MCP tool runs only when the person named it in ``read_only_tools`` (its server's
    ``readOnlyHint`` is the server's own claim: one such tool wrote a file).
    """
    if tool.startswith(MCP_PREFIX):
        return _mcp_refusal(tool, read_only_tools)
    if kind == "edit":
        return f"plan mode: {tool} changes files, and the plan is not approved yet"
    if command is None:
        return None if kind in ("read", "network") else f"plan mode: {tool} may change things"
    why = not_read_only(command)
    if why is not None:
        return f"plan mode: only read-only commands run before the plan is approved ({why})"
    return None


def _mcp_refusal(tool: str, read_only_tools: Sequence[str]) -> str | None:
    if any(fnmatch.fnmatchcase(tool, pattern) for pattern in read_only_tools):
        return None
    return (
        f"plan mode: {tool} is an MCP tool, and only the person can say it changes nothing. "
        f"To let it run in plan mode, they add it to permissions.read_only_tools in "
        f"~/.config/agent/config.yaml (a name, or a pattern such as {_pattern(tool)})"
    )


def _pattern(tool: str) -> str:
    server, _, name = tool.removeprefix(MCP_PREFIX).partition("__")
    verb = name.split("_", 1)[0]
    return f"{MCP_PREFIX}{server}__{verb}_*" if verb != name else f"{MCP_PREFIX}{server}__*"


@dataclass(frozen=True)
class PlanAwareSandbox(Sandbox):
    """The command sandbox, read-only and offline while ``read_only()`` (plan mode) says so.

    Only ``run_command``'s launch (`argv`) changes; MCP servers keep the mode they started
    with. Plan mode confines commands with every kernel layer the machine has, also where the
    person turned the sandbox off: it promises no changes. Where the kernel has none,
    `guard_note` says the program list above is the only guard.
    """

    read_only: Callable[[], bool] = field(default=lambda: False, compare=False)

    @classmethod
    def around(cls, sandbox: Sandbox, read_only: Callable[[], bool]) -> PlanAwareSandbox:
        """``sandbox`` with plan mode's read-only switch."""
        values = {item.name: getattr(sandbox, item.name) for item in fields(Sandbox)}
        return cls(**values, read_only=read_only)

    @functools.cached_property
    def planning(self) -> Sandbox:
        """The sandbox plan mode's commands run in: read-only, no network (the kernel is
        probed on first use when the configured sandbox is off, which never probed it)."""
        values = {item.name: getattr(self, item.name) for item in fields(Sandbox)}
        plan = Sandbox(**values)
        if plan.mode is SandboxMode.OFF:
            missing = namespaces_missing()
            plan = replace(
                plan,
                abi=landlock.abi_version(),
                namespaces=not missing,
                namespaces_missing=missing,
            )
        return replace(plan, mode=SandboxMode.READ_ONLY, network=False)

    @property
    def enforced(self) -> bool:
        return self.planning.enforced if self.read_only() else super().enforced

    @property
    def blocks_network(self) -> bool:
        return self.planning.blocks_network if self.read_only() else super().blocks_network

    def argv(self, command: str, workspace: Path) -> list[str]:
        if self.read_only():
            return self.planning.argv(command, workspace)
        return super().argv(command, workspace)

    def describe(self) -> str:
        if self.read_only():
            return f"{self.planning.describe()}, while in plan mode"
        return super().describe()

    def denied_hint(self) -> str:
        if self.read_only():
            return PLAN_DENIED_HINT
        return super().denied_hint()

    def guard_note(self) -> str | None:
        """What the person should know about plan mode's guard here, or None: where the kernel
        cannot make commands read-only, the program list is the only guard."""
        if self.planning.layers():
            return None
        return (
            "Plan mode here has no kernel sandbox (no Landlock, no namespaces): the list of "
            "read-only programs is the only guard, and an option of one of them that writes "
            "or runs a program is not stopped. Check each command before you approve it."
        )


@functools.lru_cache(maxsize=4)  # the REPL's mode line asks on every redraw
def plan_guard_note(sandbox: Sandbox) -> str | None:
    """`PlanAwareSandbox.guard_note` for the session's ``sandbox``: what to say where plan
    mode has no kernel layer (for ``/permissions`` and the plan-mode banner)."""
    if not isinstance(sandbox, PlanAwareSandbox):
        sandbox = PlanAwareSandbox.around(sandbox, lambda: True)
    return sandbox.guard_note()
