"""Slash commands of the REPL: a table of name → handler, with descriptions for completion.

The commands talk to a `CommandHost` (the REPL implements it), never to the agent, its store
or its provider directly, so they can be tested with a small fake host and no terminal.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Protocol

import structlog
from rich.console import Console, RenderableType
from rich.text import Text

from agent.setup.config import ConfigError
from agent.setup.doctor import Finding
from agent.terminal.agents_view import agent_choices, agents_command
from agent.terminal.bashes_view import bashes
from agent.terminal.input_line import CommandInfo
from agent.terminal.repl_view import (
    cost_table,
    doctor_table,
    help_table,
    print_picker,
    stats_table,
)
from agent.terminal.skills_view import skill_choices, skills_command
from agent.terminal.status_line import detour_text
from providers import Event, LlmError, Usage
from providers.models import ModelRef
from recovery import RecoveryStats
from sessions import SessionError, SessionSummary
from tools import UndoPreview, UndoReport
from tools.background import BackgroundShells


@dataclass(frozen=True)
class UsageSoFar:
    """Tokens used: in this run, in the saved session before it, and per model."""

    this_run: Usage
    before: Usage = field(default_factory=Usage)
    by_model: dict[str, Usage] = field(default_factory=dict)
    """Over the whole session, by the model name each response reported."""
    primary: str = ""
    """The chain's first model (``provider:model``): what is not it ran on a fallback."""
    by_purpose: dict[str, Usage] = field(default_factory=dict)
    """Over the whole session, by what the requests were for (turn, compaction, ...)."""


class CommandHost(Protocol):
    """What the slash commands need from the REPL."""

    console: Console
    workspace: Path

    @property
    def environ(self) -> Mapping[str, str]: ...

    @property
    def session_id(self) -> str: ...

    def show(self, renderable: RenderableType) -> None:
        """Print ``renderable`` between prompts."""
        ...

    async def ask(self, question: str) -> str:
        """One line of input (a picker); empty on Ctrl-C or Ctrl-D."""
        ...

    async def compact(self, focus: str | None) -> None:
        """Summarise the conversation now; Ctrl-C cancels it."""
        ...

    def undo_last_turn(self) -> UndoReport: ...

    def undo_preview(self) -> UndoPreview | None:
        """What /undo would undo, and how many turns ago it was; None: nothing."""
        ...

    async def doctor(self) -> list[Finding] | None:
        """What ``/doctor`` checks; None if Ctrl-C cancelled it."""
        ...

    def model_chain(self) -> list[str]: ...

    def current_model(self) -> str: ...

    def switch_model(self, ref: ModelRef) -> None:
        """Use ``ref`` from now on; `ValueError` says why it cannot be used."""
        ...

    def recovery_stats(self) -> tuple[RecoveryStats, Sequence[Event], str]:
        """What recovery did, the events so far, and the sandbox in force."""
        ...

    def usage(self) -> UsageSoFar: ...

    def saved_sessions(self) -> list[SessionSummary]:
        """Saved sessions, newest first."""
        ...

    def new_session(self) -> None: ...

    def mcp_status(self) -> RenderableType:
        """Each MCP server's state (starting, ready with N tools, failed with why)."""
        ...

    def resume(self, target: str) -> None:
        """Continue the saved session ``target`` (an id or unique prefix)."""
        ...

    def todo_list(self) -> RenderableType:
        """``/todos``: the model's plan, every item."""
        ...

    def background_shells(self) -> BackgroundShells:
        """The background commands the model started in this session."""
        ...


Handler = Callable[[str], Awaitable[bool]]
"""Runs a command with its argument; False ends the REPL."""

PICKER_SIZE = 15
log = structlog.get_logger("agent.terminal.commands")


def closest(name: str, names: Sequence[str]) -> str | None:
    """The known command ``name`` was most likely meant to be: one a typo or two away
    (a letter wrong, missing, extra, or two swapped), or the only one it begins; else None.
    A loose likeness is no suggestion: ``/foo`` is not ``/doctor``."""
    allowed = 1 if len(name) <= 5 else 2
    near = sorted((typo_distance(name, known), known) for known in names)
    if near and near[0][0] <= allowed:
        return near[0][1]
    prefixed = [known for known in names if len(name) >= 3 and known.startswith(name)]
    return prefixed[0] if len(prefixed) == 1 else None


def typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) that turn ``a`` into ``b``."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(row[j - 1] + 1, rows[-1][j] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


class SlashCommands:
    """The REPL's commands; each handler returns False to leave the REPL."""

    def __init__(
        self, host: CommandHost, extra: Callable[[], list[CommandInfo]] = lambda: []
    ) -> None:
        self.host = host
        self.extra = extra
        """More commands to list (the custom ones, from files), run by the REPL itself."""
        self.table: dict[str, tuple[Handler, CommandInfo]] = {}
        self._add("/help", "/help", "show commands and keys", self._help)
        self._add("/resume", "/resume [id]", "resume a saved session", self._resume, self._ids)
        self._add("/sessions", "/sessions", "list saved sessions", self._sessions)
        self._add("/compact", "/compact [focus]", "summarise the conversation now", self._compact)
        self._add("/model", "/model [ref]", "show or switch the model", self._model, self._models)
        self._add("/undo", "/undo", "restore the files the last turn changed", self._undo)
        self._add("/stats", "/stats", "what recovery did: retries, fallbacks, waits", self._stats)
        self._add("/doctor", "/doctor", "check keys, models, sandbox, MCP servers", self._doctor)
        self._add(
            "/cost",
            "/cost",
            "tokens and money per model and purpose, and the fallbacks' share",
            self._cost,
        )
        self._add("/mcp", "/mcp", "MCP servers and their state", self._mcp)
        skills, choices = partial(skills_command, host), partial(skill_choices, host)
        self._add("/skills", "/skills [allow NAME]", "list skills or allow one", skills, choices)
        agents, kinds = partial(agents_command, host), partial(agent_choices, host)
        self._add("/agents", "/agents [allow NAME]", "sub-agent kinds; allow one", agents, kinds)
        self._add("/todos", "/todos", "the model's plan for this task", self._todos)
        self._add("/bashes", "/bashes [kill ID]", "background commands; stop one", self._bashes)
        self._add("/clear", "/clear", "start a fresh session", self._clear)
        self._add("/exit", "/exit", "leave (the session is saved)", self._exit)

    def _add(
        self,
        name: str,
        usage: str,
        description: str,
        handler: Handler,
        arguments: Callable[[], Sequence[tuple[str, str]]] | None = None,
    ) -> None:
        self.table[name] = (handler, CommandInfo(name, usage, description, arguments))

    def infos(self) -> list[CommandInfo]:
        """The commands, for completion and /help."""
        return [info for _, info in self.table.values()] + self.extra()

    async def run(self, line: str) -> bool:
        """Run ``/name arg``; False means leave the REPL."""
        name, _, arg = line.strip().partition(" ")
        entry = self.table.get(name.lower())
        if entry is None:
            guess = closest(name.lower(), list(self.table))
            hint = f" Did you mean {guess}?" if guess else ""
            self._say(f"Unknown command {name}.{hint} Type /help for the list.", "yellow")
            return True
        try:
            return await entry[0](arg.strip())
        except (ConfigError, SessionError, LlmError, ValueError) as error:
            self._say(str(error), "red")
        except Exception as error:  # a command must never end the REPL
            log.exception("command_crashed", command=name)
            self._say(f"{name} failed: {error!r}. Details are in the log.", "red")
        return True

    def _say(self, text: str, style: str = "") -> None:
        self.host.show(Text(text, style=style))

    # -- handlers -------------------------------------------------------------------------

    async def _help(self, _: str) -> bool:
        self.host.show(help_table(self.infos()))
        return True

    async def _exit(self, _: str) -> bool:
        return False

    async def _undo(self, _: str) -> bool:
        preview = self.host.undo_preview()
        if preview is not None and preview.turns_ago > 0:
            answer = await self.host.ask(preview.question())
            if answer.strip().lower() not in ("y", "yes"):
                self._say("Nothing undone.", "dim")
                return True
        report = self.host.undo_last_turn()
        style = "red" if report.failed else "yellow" if report.kept else "green"
        self._say(report.describe(self.host.workspace), style)
        return True

    async def _model(self, arg: str) -> bool:
        if arg:
            try:
                self.host.switch_model(ModelRef.parse(arg))
            except (ValueError, KeyError) as error:
                self._say(str(error), "red")
                return True
        chain = " → ".join(self.host.model_chain())
        self._say(f"Model: {self.host.current_model()}  (chain: {chain})")
        detour = self.host.recovery_stats()[0].detour
        if detour is not None:
            self._say(detour_text(detour, datetime.now()), "yellow")
        return True

    def _models(self) -> list[tuple[str, str]]:
        return [(ref, "in the chain") for ref in self.host.model_chain()]

    async def _stats(self, _: str) -> bool:
        self.host.show(stats_table(*self.host.recovery_stats()))
        return True

    async def _cost(self, _: str) -> bool:
        usage = self.host.usage()
        total = usage.before + usage.this_run
        by_model, by_purpose = dict(usage.by_model), dict(usage.by_purpose)
        self.host.show(cost_table(usage.this_run, total, by_model, usage.primary, by_purpose))
        return True

    async def _mcp(self, _: str) -> bool:
        self.host.show(self.host.mcp_status())
        return True

    async def _todos(self, _: str) -> bool:
        self.host.show(self.host.todo_list())
        return True

    async def _bashes(self, arg: str) -> bool:
        self.host.show(await bashes(self.host.background_shells(), arg))
        return True

    async def _clear(self, _: str) -> bool:
        self.host.new_session()
        return True

    async def _sessions(self, _: str) -> bool:
        from agent.terminal.sessions_view import render_sessions

        summaries = self._summaries()[:20]
        render_sessions(self.host.console, summaries, cwd=self.host.workspace, all_dirs=True)
        return True

    async def _doctor(self, _: str) -> bool:
        findings = await self.host.doctor()
        if findings is not None:
            self.host.show(doctor_table(findings))
        return True

    async def _compact(self, arg: str) -> bool:
        await self.host.compact(arg or None)
        return True

    async def _resume(self, arg: str) -> bool:
        target = arg or await self._pick()
        if target:
            self.host.resume(target)
        return True

    def _summaries(self, *, quiet: bool = False) -> list[SessionSummary]:
        """Saved sessions with something in them (the one just started has nothing yet)."""
        try:
            return [s for s in self.host.saved_sessions() if s.message_count]
        except SessionError as error:
            if not quiet:  # completion asks while the person types: no output then
                self._say(str(error), "red")
            return []

    def _ids(self) -> list[tuple[str, str]]:
        summaries = self._summaries(quiet=True)[:PICKER_SIZE]
        return [(s.id, s.first_prompt.replace("\n", " ")[:50]) for s in summaries]

    async def _pick(self) -> str | None:
        current = self.host.session_id
        summaries = [s for s in self._summaries() if s.id != current][:PICKER_SIZE]
        if not summaries:
            self._say("No other saved sessions.")
            return None
        rows = [
            (
                s.id,
                time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)),
                s.first_prompt.replace("\n", " ")[:60],
            )
            for s in summaries
        ]
        print_picker(self.host.console, rows)
        answer = await self.host.ask(f"Resume which? [1-{len(rows)}, Enter to cancel]: ")
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(rows):
            return rows[int(answer) - 1][0]
        if answer:
            return answer  # an id or prefix typed at the picker
        return None
