"""``agent -p``: one turn, non-interactive, text or JSON output."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import sys
from typing import Any, NoReturn

import structlog
from rich.console import Console
from rich.markup import escape

from agent.app import Agent
from agent.engine.outcome import TurnResult, TurnStatus
from agent.exit_codes import ExitCode
from agent.setup.logs import flush_logs
from agent.setup.startup import Options, SetupError, boot
from agent.terminal.banners import notice_line
from agent.terminal.console import SafeConsole
from agent.terminal.ui import ConsoleUI

log = structlog.get_logger("agent.oneshot")


def run_once(options: Options, prompt: str | None, *, json_output: bool) -> int:
    """Run one turn; print the answer (or a JSON object). Returns the exit code.

    A resumed session that stopped mid-turn gets ``prompt`` in the same request as the rest of
    that turn (one turn, one answer); ``prompt`` None continues that turn as it was.
    """
    no_color = bool(os.environ.get("NO_COLOR"))
    out = SafeConsole(file=sys.stdout, no_color=no_color, highlight=False, soft_wrap=True)
    err = SafeConsole(file=sys.stderr, no_color=no_color, highlight=False, soft_wrap=True)
    environ = dict(os.environ)
    # Text already written to a pipe cannot be taken back when a stream restarts, so a
    # pipe gets the finished answer once, at the end; a terminal sees it stream.
    stream = not json_output and out.is_terminal
    try:
        started = boot(options, environ)
        ui = ConsoleUI(out, err, stream=stream, verbose=options.verbose, redact=started.redact)
        agent = Agent(started.config, options, face=ui, approver=None, environ=started.environ)
    except SetupError as problem:
        return _usage_error(str(problem), None, err, json_output=json_output)
    if (held_back := started.trust.held) is not None:
        held = f"{held_back.describe()}. Not applied: run `agent trust` here to allow it."
        err.print(f"[yellow]! {escape(held)}[/yellow]")
    if prompt is None and not agent.stopped_mid_turn:
        agent.close()
        nothing = (
            f"Session {agent.session_id} did not stop mid-turn, so there is nothing to continue. "
            f'Give a prompt: agent -p "..." --resume {agent.session_id}'
        )
        return _usage_error(nothing, agent.session_id, err, json_output=json_output)
    for start_notice in agent.notices:
        err.print(notice_line(start_notice))
    if agent.mcp.pending:
        from agent.setup.mcp_setup import pending_notice

        err.print(f"[yellow]! {escape(pending_notice(agent.mcp.pending))}[/yellow]")
    for notice in agent.resume_notices():
        err.print(f"[yellow]! {escape(notice)}[/yellow]")
    status, result = _run_guarded(agent, prompt)
    ui.finish()
    agent.close()
    error = (
        result.error if result else ("Interrupted." if status is TurnStatus.INTERRUPTED else None)
    )
    # What goes to a terminal or a CI log hides secrets, as the session and the log do: a
    # server's error may quote the key it was sent.
    redact = started.redactor
    error = redact.text(error) if error else error
    if json_output:
        events = [redact.value(event.model_dump(mode="json")) for event in agent.recorded]
        usage = agent.usage.model_dump()
        answer = redact.text(result.answer) if result else ""
        print(json.dumps(_payload(agent.session_id, status.value, answer, error, events, usage)))
    elif not stream and result is not None and result.answer:
        out.print(redact.text(result.answer), markup=False, highlight=False, emoji=False)
    if not json_output and error:
        # Errors quote the server, whose "[...]" must not be read as rich markup.
        err.print(f"[red]{escape(error)}[/red]")
    hint = agent.resume_hint()
    if status is not TurnStatus.DONE and hint:
        err.print(hint)
    if status is TurnStatus.DONE:
        return ExitCode.OK
    return ExitCode.INTERRUPTED if status is TurnStatus.INTERRUPTED else ExitCode.FAILED


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` at once, skipping interpreter finalisation.

    Tearing down the interpreter (modules, the loaded session's objects, the SDK) took about
    0.45 s after the answer was already printed. Call this only after `run_once` returned: the
    session is closed by then (its last records fsynced, its lock released). What else could
    be lost is dealt with here: exit handlers run, and standard streams and logs are flushed.
    A flush that fails because the reader went away does not change the exit code.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    flush_logs()
    os._exit(code)


def _usage_error(problem: str, session_id: str | None, err: Console, *, json_output: bool) -> int:
    if json_output:
        print(json.dumps(_payload(session_id, "error", "", problem, [], None)))
    err.print(f"[red]agent: {escape(problem)}[/red]")
    return ExitCode.USAGE


def _payload(
    session_id: str | None,
    status: str,
    result: str,
    error: str | None,
    events: list[dict[str, Any]],
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "status": status,
        "result": result,
        "error": error,
        "events": events,
        "usage": usage,
    }


def _run_guarded(agent: Agent, prompt: str | None) -> tuple[TurnStatus, TurnResult | None]:
    """Run the turn; SIGINT, SIGTERM and SIGHUP cancel it and leave the session consistent."""

    async def main() -> TurnResult:
        task = asyncio.current_task()
        assert task is not None
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            running.add_signal_handler(sig, task.cancel)
        return await agent.run_turn(prompt)

    try:
        result = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        agent.interrupted()
        return TurnStatus.INTERRUPTED, None
    except Exception as error:  # the session must stay consistent whatever went wrong
        log.exception("turn_crashed")
        message = f"Internal error: {error!r}. Details are in the log."
        agent.record_crash(message)
        return TurnStatus.FAILED, TurnResult(status=TurnStatus.FAILED, error=message)
    return result.status, result
