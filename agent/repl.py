"""The interactive REPL: prompt-toolkit input, rich output, slash commands, Ctrl-C handling."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from rich.console import Console

from agent.app import Agent, Options, SetupError, load
from agent.config import Config, agent_home
from agent.logging import configure_logging
from agent.ui import ConsoleUI
from tools import ApprovalRequest

EXIT_OK, EXIT_USAGE = 0, 2

Command = Callable[[str], Awaitable[bool]]


class PromptApprover:
    """Asks the person before a tool call that needs approval."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.always: set[str] = set()

    async def approve(self, request: ApprovalRequest) -> bool:
        if request.tool in self.always:
            return True
        self.console.print(f"[bold]{request.tool}[/bold] wants to: {request.summary}")
        if request.details:
            self.console.print(request.details, markup=False, highlight=False)
        answer = await PromptSession[str]().prompt_async("Allow? [y]es / [n]o / [a]lways: ")
        choice = answer.strip().lower()
        if choice in {"a", "always"}:
            self.always.add(request.tool)
            return True
        return choice in {"y", "yes"}


class Repl:
    """Reads prompts and slash commands until /exit, Ctrl-D or Ctrl-C twice."""

    def __init__(
        self, *, console: Console, config: Config, options: Options, environ: dict[str, str]
    ) -> None:
        self.console = console
        self.config = config
        self.options = options
        self.environ = environ
        self.ui = ConsoleUI(console)
        self.approver = PromptApprover(console)
        self.agent = self._make_agent(options)
        home = agent_home(environ)
        home.mkdir(parents=True, exist_ok=True)
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(home / "history")), multiline=False
        )
        self.commands: dict[str, tuple[Command, str]] = {
            "/help": (self._help, "show the commands"),
            "/exit": (self._exit, "leave (the session is saved)"),
            "/undo": (self._undo, "restore the files the last turn changed"),
            "/model": (self._model, "show or switch the model: /model provider:model"),
            "/stats": (self._stats, "recovery and usage counters"),
            "/clear": (self._clear, "start a fresh session"),
            "/resume": (self._resume, "resume a saved session: /resume ID"),
            "/sessions": (self._sessions, "list saved sessions"),
            "/compact": (self._compact, "compact the conversation now: /compact [focus]"),
        }

    def _make_agent(self, options: Options) -> Agent:
        return Agent(self.config, options, ui=self.ui, approver=self.approver, environ=self.environ)

    def run(self) -> int:
        return asyncio.run(self._main())

    async def _main(self) -> int:
        self._greet()
        last_interrupt = 0.0
        while True:
            try:
                text = await self.session.prompt_async("› ")
            except KeyboardInterrupt:
                now = asyncio.get_running_loop().time()
                if now - last_interrupt < 2.0:
                    break
                last_interrupt = now
                self.console.print("[dim](Ctrl-C again or Ctrl-D to exit)[/dim]")
                continue
            except EOFError:
                break
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                name, _, arg = text.partition(" ")
                if not await self._command(name, arg.strip()):
                    break
                continue
            await self._turn(text)
        self.agent.close()
        self.console.print(self.agent.resume_hint())
        return EXIT_OK

    def _greet(self) -> None:
        model = self.agent.provider.current
        self.console.print(
            f"[bold]agent[/bold] · {model} · {self.options.workspace}\n"
            "[dim]Type a request, /help for commands, Ctrl-D to exit.[/dim]"
        )
        if self.agent.loaded is not None:
            for warning in self.agent.loaded.warnings:
                self.console.print(f"[yellow]! {warning}[/yellow]")

    async def _turn(self, prompt: str | None) -> None:
        task = asyncio.create_task(self.agent.run_turn(prompt))
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            result = await task
        except asyncio.CancelledError:
            self.ui.finish()
            self.agent.interrupted()
            self.console.print("[yellow]Interrupted. The session is saved.[/yellow]")
            return
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        self.ui.finish()
        if result.error:
            self.console.print(f"[red]{result.error}[/red]")

    async def _command(self, name: str, arg: str) -> bool:
        entry = self.commands.get(name)
        if entry is None:
            close = _closest(name, list(self.commands))
            hint = f" Did you mean {close}?" if close else ""
            self.console.print(f"Unknown command {name}.{hint} Type /help.")
            return True
        return await entry[0](arg)

    async def _help(self, _: str) -> bool:
        for name, (_handler, text) in self.commands.items():
            self.console.print(f"  [bold]{name:<10}[/bold] {text}")
        return True

    async def _exit(self, _: str) -> bool:
        return False

    async def _undo(self, _: str) -> bool:
        report = self.agent.tools.undo_last_turn()
        self.console.print(str(report))
        return True

    async def _model(self, arg: str) -> bool:
        if not arg:
            self.console.print(f"Model: {self.agent.provider.current}")
            return True
        from agent.llm.models import ModelRef

        try:
            self.agent.provider.switch_to(ModelRef.parse(arg))
        except (ValueError, KeyError) as error:
            self.console.print(f"[red]{error}[/red]")
            return True
        self.console.print(f"Model: {self.agent.provider.current}")
        return True

    async def _stats(self, _: str) -> bool:
        counts: dict[str, int] = {}
        for event in self.agent.recorded:
            counts[event.type] = counts.get(event.type, 0) + 1
        usage = self.agent.loop.usage
        self.console.print(f"Tokens: {usage.input_tokens} in, {usage.output_tokens} out")
        for kind, count in sorted(counts.items()):
            self.console.print(f"  {kind}: {count}")
        return True

    async def _clear(self, _: str) -> bool:
        self.agent.close()
        self.agent = self._make_agent(
            Options(**{**vars(self.options), "resume": None, "continue_latest": False})
        )
        self.console.print(f"New session {self.agent.session_id}.")
        return True

    async def _resume(self, arg: str) -> bool:
        if not arg:
            return await self._sessions("")
        self.agent.close()
        try:
            self.agent = self._make_agent(
                Options(**{**vars(self.options), "resume": arg, "continue_latest": False})
            )
        except SetupError as error:
            self.console.print(f"[red]{error}[/red]")
            self.agent = self._make_agent(self.options)
            return True
        self.console.print(f"Resumed {self.agent.session_id}.")
        return True

    async def _sessions(self, _: str) -> bool:
        from agent.sessions_view import render_sessions

        render_sessions(
            self.console, self.agent.store.list()[:20], cwd=self.options.workspace, all_dirs=False
        )
        return True

    async def _compact(self, arg: str) -> bool:
        await self.agent.compact(focus=arg or None)
        return True


def _closest(name: str, names: list[str]) -> str | None:
    import difflib

    matches = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    return matches[0] if matches else None


def run_interactive(options: Options) -> int:
    """``agent``: the REPL. Returns the exit code."""
    environ = dict(os.environ)
    console = Console(no_color=bool(environ.get("NO_COLOR")), highlight=False)
    try:
        config = load(options, environ)
        configure_logging(agent_home(environ), verbose=options.verbose)
        repl = Repl(console=console, config=config, options=options, environ=environ)
    except SetupError as error:
        console.print(f"[red]agent: {error}[/red]")
        return EXIT_USAGE
    return repl.run()
