"""``agent -p``: one turn, non-interactive, text or JSON output."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

import structlog
from rich.console import Console
from rich.markup import escape

from agent.app import Agent, Options, SetupError, load, start_logging
from agent.loop import TurnResult, TurnStatus
from agent.ui import ConsoleUI

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
log = structlog.get_logger("agent.oneshot")


def run_once(options: Options, prompt: str, *, json_output: bool) -> int:
    """Run one turn with ``prompt``; print the answer (or a JSON object). Returns the exit code."""
    no_color = bool(os.environ.get("NO_COLOR"))
    out = Console(file=sys.stdout, no_color=no_color, highlight=False, soft_wrap=True)
    err = Console(file=sys.stderr, no_color=no_color, highlight=False, soft_wrap=True)
    environ = dict(os.environ)
    # Text already written to a pipe cannot be taken back when a stream restarts, so a
    # pipe gets the finished answer once, at the end; a terminal sees it stream.
    stream = not json_output and out.is_terminal
    ui = ConsoleUI(out, err, stream=stream)
    try:
        config = load(options, environ)
        start_logging(config, options, environ)
        agent = Agent(config, options, ui=ui, approver=None, environ=environ)
    except SetupError as problem:
        if json_output:
            print(json.dumps(_payload(None, "error", "", str(problem), [], None)))
        err.print(f"[red]agent: {escape(str(problem))}[/red]")
        return EXIT_USAGE
    for notice in agent.resume_notices():
        err.print(f"[yellow]! {escape(notice)}[/yellow]")
    status, result = _run_guarded(agent, prompt)
    ui.finish()
    agent.close()
    error = (
        result.error if result else ("Interrupted." if status is TurnStatus.INTERRUPTED else None)
    )
    if json_output:
        events = [event.model_dump(mode="json") for event in agent.recorded]
        usage = agent.loop.usage.model_dump()
        answer = result.answer if result else ""
        print(json.dumps(_payload(agent.session_id, status.value, answer, error, events, usage)))
    elif not stream and result is not None and result.answer:
        out.print(result.answer, markup=False, highlight=False, emoji=False)
    if not json_output and error:
        # Errors quote the server, whose "[...]" must not be read as rich markup.
        err.print(f"[red]{escape(error)}[/red]")
    if status is not TurnStatus.DONE:
        err.print(agent.resume_hint())
    if status is TurnStatus.DONE:
        return EXIT_OK
    return EXIT_INTERRUPTED if status is TurnStatus.INTERRUPTED else EXIT_FAILED


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


def _run_guarded(agent: Agent, prompt: str) -> tuple[TurnStatus, TurnResult | None]:
    """Run the turn; SIGINT, SIGTERM and SIGHUP cancel it and leave the session consistent."""

    async def main() -> TurnResult:
        task = asyncio.current_task()
        assert task is not None
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            running.add_signal_handler(sig, task.cancel)
        resume_pending = agent.loaded is not None and agent.loaded.ends_with_user_message
        if resume_pending:
            # The session stopped before the model answered: answer that first.
            await agent.run_turn(None)
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
