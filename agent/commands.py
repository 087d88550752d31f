"""Slash commands of the REPL: a table of name → handler, with descriptions for completion."""

from __future__ import annotations

import difflib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from agent.llm.models import ModelRef
from agent.repl_input import CommandInfo
from agent.repl_view import cost_table, help_table, print_picker, stats_table
from sessions import SessionError, SessionSummary

if TYPE_CHECKING:
    from agent.repl import Repl

Handler = Callable[[str], Awaitable[bool]]
"""Runs a command with its argument; False ends the REPL."""

PICKER_SIZE = 15


def closest(name: str, names: Sequence[str]) -> str | None:
    """The known command ``name`` was most likely meant to be."""
    matches = difflib.get_close_matches(name, names, n=1, cutoff=0.4)
    if matches:
        return matches[0]
    prefixed = [known for known in names if known.startswith(name[:2])]
    return prefixed[0] if len(prefixed) == 1 else None


class SlashCommands:
    """The REPL's commands; each handler returns False to leave the REPL."""

    def __init__(self, repl: Repl) -> None:
        self.repl = repl
        self.table: dict[str, tuple[Handler, CommandInfo]] = {}
        self._add("/help", "/help", "show commands and keys", self._help)
        self._add("/resume", "/resume [id]", "resume a saved session", self._resume, self._ids)
        self._add("/sessions", "/sessions", "list saved sessions", self._sessions)
        self._add("/compact", "/compact [focus]", "summarise the conversation now", self._compact)
        self._add("/model", "/model [ref]", "show or switch the model", self._model, self._models)
        self._add("/undo", "/undo", "restore the files the last turn changed", self._undo)
        self._add("/stats", "/stats", "what recovery did: retries, fallbacks, waits", self._stats)
        self._add("/cost", "/cost", "tokens used", self._cost)
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
        return [info for _, info in self.table.values()]

    async def run(self, line: str) -> bool:
        """Run ``/name arg``; False means leave the REPL."""
        name, _, arg = line.strip().partition(" ")
        entry = self.table.get(name.lower())
        if entry is None:
            guess = closest(name.lower(), list(self.table))
            hint = f" Did you mean {guess}?" if guess else ""
            self._say(f"Unknown command {name}.{hint} Type /help for the list.", "yellow")
            return True
        return await entry[0](arg.strip())

    def _say(self, text: str, style: str = "") -> None:
        self.repl.ui.show(Text(text, style=style))

    # -- handlers -------------------------------------------------------------------------

    async def _help(self, _: str) -> bool:
        self.repl.ui.show(help_table(self.infos()))
        return True

    async def _exit(self, _: str) -> bool:
        return False

    async def _undo(self, _: str) -> bool:
        report = self.repl.agent.tools.undo_last_turn()
        self._say(report.describe(), "green" if report.ok else "red")
        return True

    async def _model(self, arg: str) -> bool:
        agent = self.repl.agent
        if arg:
            try:
                ref = ModelRef.parse(arg)
                self.repl.switch_model(ref)
            except (ValueError, KeyError) as error:
                self._say(str(error), "red")
                return True
        chain = " → ".join(str(target.ref) for target in agent.provider.chain)
        self._say(f"Model: {agent.provider.current}  (chain: {chain})")
        return True

    def _models(self) -> list[tuple[str, str]]:
        return [(str(t.ref), "in the chain") for t in self.repl.agent.provider.chain]

    async def _stats(self, _: str) -> bool:
        agent = self.repl.agent
        self.repl.ui.show(stats_table(agent.provider.stats(), agent.recorded))
        return True

    async def _cost(self, _: str) -> bool:
        agent = self.repl.agent
        loaded = agent.loaded
        this_run = agent.loop.usage
        before = loaded.usage_total if loaded is not None else this_run.__class__()
        by_model = dict(loaded.usage_by_model) if loaded is not None else {}
        self.repl.ui.show(cost_table(this_run, before + this_run, by_model))
        return True

    async def _clear(self, _: str) -> bool:
        self.repl.new_session()
        return True

    async def _sessions(self, _: str) -> bool:
        from agent.sessions_view import render_sessions

        summaries = self._summaries()[:20]
        render_sessions(self.repl.console, summaries, cwd=self.repl.workspace, all_dirs=True)
        return True

    async def _compact(self, arg: str) -> bool:
        await self.repl.run_command(self.repl.agent.compact(focus=arg or None))
        return True

    async def _resume(self, arg: str) -> bool:
        target = arg or await self._pick()
        if target:
            self.repl.resume(target)
        return True

    def _summaries(self, *, quiet: bool = False) -> list[SessionSummary]:
        try:
            return self.repl.agent.store.list()
        except SessionError as error:
            if not quiet:  # completion asks while the person types: no output then
                self._say(str(error), "red")
            return []

    def _ids(self) -> list[tuple[str, str]]:
        summaries = self._summaries(quiet=True)[:PICKER_SIZE]
        return [(s.id, s.first_prompt.replace("\n", " ")[:50]) for s in summaries]

    async def _pick(self) -> str | None:
        current = self.repl.agent.session_id
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
        print_picker(self.repl.console, rows)
        answer = await self.repl.ask(f"Resume which? [1-{len(rows)}, Enter to cancel]: ")
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(rows):
            return rows[int(answer) - 1][0]
        if answer:
            return answer  # an id or prefix typed at the picker
        return None
