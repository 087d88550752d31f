"""The interactive REPL: prompt-toolkit input, rich output, slash commands, Ctrl-C handling.

Ctrl-C during a turn (or a command such as /compact) cancels it at once, also in the middle
of a backoff; the loop closes dangling tool calls and the session records the interruption.
At an empty prompt, Ctrl-C twice within two seconds or Ctrl-D leaves with the resume hint.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import structlog
from prompt_toolkit import PromptSession
from rich.console import Console, RenderableType
from rich.text import Text

from agent.app import Agent, build_agent
from agent.engine.face import Faces
from agent.engine.outcome import unwrapped
from agent.exit_codes import ExitCode
from agent.setup.doctor import Finding
from agent.setup.startup import Options, SetupError, Started, boot
from agent.terminal.approval import PromptApprover
from agent.terminal.command_runner import CustomCommands, allowed_tools
from agent.terminal.commands import SlashCommands, UsageSoFar
from agent.terminal.console import SafeConsole
from agent.terminal.escalation import try_again
from agent.terminal.greeting import greeting, resumed_lines
from agent.terminal.input_line import PROMPT, EmptyInterrupt, LineNotice, build_session
from agent.terminal.interrupts import Interrupts
from agent.terminal.repl_view import toolbar_line
from agent.terminal.trust_view import ask_to_trust
from agent.terminal.turn_changes import TurnChanges
from agent.terminal.typed_input import TypedInput
from agent.terminal.ui import ConsoleUI, StatusSource
from providers import Event, Usage
from providers.models import ModelRef
from recovery import RecoveryStats
from recovery.chaos_report import chaos_report
from recovery.usage import merged_usage
from sessions import SessionError, SessionSummary
from tools import UndoPreview, UndoReport
from tools.background import BackgroundShells

DOUBLE_INTERRUPT = 2.0
T = TypeVar("T")
log = structlog.get_logger("agent.terminal.repl")


class Repl:
    """Reads prompts and slash commands until /exit, Ctrl-D or Ctrl-C twice."""

    def __init__(self, *, console: Console, started: Started) -> None:
        self.console = console
        self.config = started.config
        self.options = options = started.options
        self.environ = started.environ
        self.redactor = started.redactor
        self.workspace = options.workspace
        self.ui = ConsoleUI(
            console, workspace=options.workspace, verbose=options.verbose, redact=started.redact
        )
        self.approver = PromptApprover(self.ui, rules=lambda: self.agent.permissions)
        self.changes = TurnChanges(options.workspace)
        self.interrupts = Interrupts()
        self.agent = self._make_agent(options)
        self._answered = False
        source = StatusSource(model=lambda: self.agent.model, usage=lambda: self.agent.usage)
        source.background = lambda: self.agent.shells.running_count
        self.ui.bind(source)
        custom = CustomCommands(self.workspace, self.environ, started.home, set())
        self.typed = TypedInput(self, custom)
        self.commands = SlashCommands(self, self.typed.command_infos)
        custom.taken.update(self.commands.table)
        self.notice = LineNotice()
        self.prompt = build_session(
            started.home / "history",
            self.commands.infos,
            self._toolbar,
            redact=self.agent.redact,
            workspace=self.workspace,
            on_shift_tab=self.typed.cycle_mode,
            on_paste_image=self.typed.pasted.paste,
            notice=self.notice,
        )

    def _make_agent(self, options: Options, previous: Agent | None = None) -> Agent:
        # The modes: as configured, then (``previous``) as the person left them.
        agent = build_agent(
            self.config,
            options,
            face=Faces([self.ui, self.changes]),
            approver=self.approver,
            environ=self.environ,
            redactor=self.redactor,
            previous=previous,
        )
        self.ui.todos.restore(agent.loaded.events if agent.loaded is not None else ())
        return agent

    def run(self) -> int:
        """Run until the person leaves; returns the exit code."""
        try:
            return asyncio.run(self._main())
        except asyncio.CancelledError:  # SIGTERM or SIGHUP: the session is already saved
            return ExitCode.INTERRUPTED

    async def _main(self) -> int:
        main = asyncio.current_task()
        assert main is not None
        for sig in (signal.SIGTERM, signal.SIGHUP):
            asyncio.get_running_loop().add_signal_handler(sig, main.cancel)
        self._greet()
        try:
            await self._allow_project_servers()
            await self._read_eval_loop()
            await self.agent.end("prompt_input_exit")  # SessionEnd hooks, on a clean exit
        finally:
            # Also when a Ctrl-C between two prompts cancels everything.
            if self.agent.chaos is not None:
                report = chaos_report(self.agent.chaos, unwrapped(self.agent.recorded))
                self.ui.show(Text(report, style="yellow"))
            self.agent.close()
            if hint := self.agent.resume_hint():
                self.ui.show(Text(hint, style="bold red" if self.agent.save_failure else "bold"))
        return ExitCode.OK

    async def _read_eval_loop(self) -> None:
        last_interrupt = float("-inf")
        while True:
            # Runs once the prompt is drawn (prompt-toolkit draws it before its first await),
            # so the SDK import overlaps the person's typing instead of their first request.
            asyncio.get_running_loop().call_soon(self.agent.warm_up)
            self.typed.custom.refresh()
            try:
                text = await self.prompt.prompt_async(
                    lambda: self.notice.above(self.ui.todos.above(self.typed.prompt or PROMPT))
                )
                self.interrupts.arm()
            except (EmptyInterrupt, KeyboardInterrupt):
                now = time.monotonic()
                if now - last_interrupt < DOUBLE_INTERRUPT:
                    break
                last_interrupt = now
                self.ui.show(Text("Press Ctrl-C again to exit (or Ctrl-D).", style="dim"))
                continue
            except EOFError:
                break
            if self.typed.is_custom(text):
                if prepared := await self.typed.custom_prompt(text):
                    with allowed_tools(self.agent, prepared[1]):
                        await self._answer(prepared[0])  # /plan <request> asks after it too
                continue
            if text.strip().startswith("/") and not self.typed.shell_mode:
                if not await self.commands.run(text):
                    break
                continue
            if self.typed.is_shell(text):
                await self.typed.run_shell(text)
                continue
            prompt = await self.typed.prompt_text(text)
            if prompt is None:
                continue
            text = prompt
            if text.strip() or self._pending():
                await self._answer(text.strip() or None)

    # -- what the commands use (`CommandHost`) -----------------------------------------------

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    def show(self, renderable: RenderableType) -> None:
        self.ui.show(renderable)

    async def compact(self, focus: str | None) -> None:
        await self.run_command(self.agent.compact(focus=focus))

    def undo_last_turn(self) -> UndoReport:
        return self.agent.undo_last_turn()

    def undo_preview(self) -> UndoPreview | None:
        return self.agent.undo_preview()

    def model_chain(self) -> list[str]:
        return self.agent.models()

    def current_model(self) -> str:
        return self.agent.model

    def recovery_stats(self) -> tuple[RecoveryStats, Sequence[Event], str]:
        return self.agent.recovery_stats(), self.agent.recorded, self.agent.sandbox.describe()

    def usage(self) -> UsageSoFar:
        loaded, agent = self.agent.loaded, self.agent
        before, saved = (loaded.usage_total, loaded.usage_by_kind) if loaded else (Usage(), {})
        purposes = merged_usage(saved, agent.usage_by_purpose())
        return UsageSoFar(agent.usage, before, agent.usage_by_model(), agent.models()[0], purposes)

    def saved_sessions(self) -> list[SessionSummary]:
        return self.agent.saved_sessions()

    def background_shells(self) -> BackgroundShells:
        return self.agent.shells

    async def ask(self, question: str) -> str:
        """One line of input outside the main prompt (a picker); empty on Ctrl-C or Ctrl-D."""
        try:
            return await PromptSession[str]().prompt_async(question, handle_sigint=False)
        except (KeyboardInterrupt, EOFError):
            return ""

    async def run_command(self, work: Coroutine[Any, Any, T]) -> T | None:
        """Run a command's work so that Ctrl-C cancels it; None if it was cancelled."""
        self.ui.begin_turn()
        try:
            return await self.interrupts.run(work)
        finally:
            self.ui.finish()

    def switch_model(self, ref: ModelRef) -> None:
        """``/model ref``: use ``ref`` from now on (built on demand if not in the chain)."""
        try:
            notice = self.agent.use_model(ref)
        except (SetupError, SessionError) as error:
            raise ValueError(str(error)) from None
        if notice:
            self.ui.show(Text(notice, style="dim"))

    async def doctor(self) -> list[Finding] | None:
        return await self.run_command(self.agent.doctor())

    def mcp_status(self) -> RenderableType:
        """``/mcp``: each server's state, and the project's servers not allowed yet."""
        from agent.setup.mcp_setup import status_table

        return status_table(self.agent.mcp.statuses(), self.agent.mcp.pending)

    def todo_list(self) -> RenderableType:
        return self.ui.todos.listing()

    async def _allow_project_servers(self) -> None:
        """Ask once about each server a project's .mcp.json adds; allowed ones start now."""
        if not self.agent.mcp.pending:
            return
        from agent.setup.mcp_setup import approval_question

        for name, settings in list(self.agent.mcp.pending.items()):
            answer = await self.ask(approval_question(name, settings))
            if answer.strip().lower() not in ("y", "yes"):
                self.ui.show(Text(f"MCP server {name!r} not started.", style="dim"))
                continue
            try:
                self.agent.mcp.allow(name)
            except OSError as error:
                self.ui.show(Text(f"Cannot save the approval: {error}", style="red"))

    def new_session(self) -> None:
        """``/clear``: a fresh session in the same workspace."""
        fresh = self.options.fresh()
        if self._replace(fresh):
            self.console.clear()
            self.ui.show(Text(f"New session {self.agent.session_id}.", style="green"))

    def resume(self, target: str) -> None:
        """``/resume id``: continue a saved session; the current one stays saved."""
        if self.agent.session_id.startswith(target):
            self.ui.show(Text("That is the current session.", style="yellow"))
            return
        options = self.options.fresh(resume=target)
        if self._replace(options):
            self.ui.show(Text(f"Resumed {self.agent.session_id}.", style="green"))
            self._show_resumed()

    def _replace(self, options: Options) -> bool:
        try:
            fresh = self._make_agent(options, previous=self.agent)
        except SetupError as error:
            self.ui.show(Text(str(error), style="red"))
            return False
        self.agent.mcp.hand_over(fresh.mcp)  # the servers keep running for the new session
        self.agent.close()
        self.agent = fresh
        self._answered = False
        return True

    # -- turns ----------------------------------------------------------------------------

    def _pending(self) -> bool:
        """Whether the resumed session stopped mid-turn and nothing has run since."""
        return self.agent.loaded is not None and self.agent.stopped_mid_turn and not self._answered

    async def _answer(self, text: str | None) -> None:
        # After a session stopped mid-turn, a new instruction goes out in the same request as
        # the rest of that turn (one turn, one answer); Enter alone continues it. In plan mode
        # the person is then asked whether to carry the plan out.
        if await self._turn(text) and (go_ahead := await self.typed.after_turn()):
            await self._turn(go_ahead)

    async def _turn(self, prompt: str | None) -> bool:
        """Run one turn; False if it did not finish (interrupted or crashed)."""
        self.ui.begin_turn()
        self.changes.begin()
        self._answered = True
        try:
            result = await self.interrupts.run(self.agent.run_turn(prompt))
        except asyncio.CancelledError:  # the whole REPL is ending (SIGTERM, SIGHUP)
            self.ui.finish()
            self.agent.interrupted()
            raise
        except Exception as error:  # the session must stay consistent whatever went wrong
            log.exception("turn_crashed")
            self.ui.finish()
            message = f"Internal error: {error!r}. Details are in the log."
            self.agent.record_crash(message)
            self.ui.show(Text(message, style="red"))
            self._show_changes()
            return False
        self.ui.finish()
        if result is None:
            self.agent.interrupted()
            saved = "saved" if self.agent.save_failure is None else "NOT saved in full"
            self.ui.show(
                Text(f"Interrupted. The session is {saved}; go on or try again.", "yellow")
            )
        elif result.error:
            self.ui.show(Text(self.agent.redact(result.error), style="red"))
        self._show_changes()
        if result is not None and await try_again(self, result):
            return await self._turn(None)
        return result is not None and result.error is None

    def _show_changes(self) -> None:
        """What the turn changed, counted from the tools' events, whatever the answer says."""
        self.ui.show(Text(self.changes.summary(), style="dim"))

    # -- display --------------------------------------------------------------------------

    def _greet(self) -> None:
        for line in greeting(self.agent, self.workspace, self.console.width, self._pending):
            self.ui.show(line)

    def _show_resumed(self) -> None:
        for line in resumed_lines(self.agent, self.console.width, self._pending):
            self.ui.show(line)

    def _toolbar(self) -> str:
        agent, down = self.agent, None
        if agent.mcp.servers is not None:
            from agent.setup.mcp_setup import down_summary

            down = down_summary(agent.mcp.statuses())
        running, mode = agent.shells.running_count, self.typed.mode_line
        return toolbar_line(agent.model, agent.usage, agent.session_id, running, mode, down)


def run_interactive(options: Options) -> int:
    """``agent``: the REPL. Returns the exit code."""
    console = SafeConsole(highlight=False)
    try:
        started = boot(options, ask_trust=lambda trust: ask_to_trust(console, trust))
        repl = Repl(console=console, started=started)
    except SetupError as error:
        console.print(Text(f"agent: {error}", style="red"))
        return ExitCode.USAGE
    return repl.run()
