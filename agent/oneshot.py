"""``agent -p``: one turn (or, with stream-json input, one per line), non-interactive.

The prompts come from `agent.script.prompts`. Output: ``text`` (the answer), ``json`` (one
object at the end) or ``stream-json`` (JSON lines as the run goes,
`agent.script.StreamJsonFace`). Every format reports the same run, summed up by one
`agent.script.RunReport` from the engine's stream.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NoReturn

import structlog
from rich.console import Console
from rich.markup import escape

from agent import __version__
from agent.app import Agent, build_agent
from agent.engine.face import Face, Faces
from agent.engine.outcome import TurnResult, TurnStatus, unwrapped
from agent.exit_codes import ExitCode
from agent.script import RunReport, StreamJsonFace, result_subtype
from agent.script.prompts import argument_prompts, stdin_prompts
from agent.script.report import provider_unavailable
from agent.setup.logs import flush_logs
from agent.setup.startup import Options, SetupError, Started, boot
from agent.terminal.banners import notice_line
from agent.terminal.console import SafeConsole
from agent.terminal.ui import ConsoleUI
from recovery.chaos_report import chaos_report

log = structlog.get_logger("agent.oneshot")


@dataclass(frozen=True)
class Output:
    """How ``-p`` reads and reports: ``format`` text, json or stream-json."""

    format: str = "text"
    partial: bool = False
    """``--include-partial-messages``: stream-json also carries text deltas."""
    stream_input: bool = False
    """``--input-format stream-json``: prompts are JSON lines on stdin."""


def run_once(options: Options, prompt: str | None, output: Output | None = None) -> int:
    """Run the turn(s); report them as ``output`` asks. Returns the exit code.

    A resumed session that stopped mid-turn gets ``prompt`` in the same request as the rest of
    that turn (one turn, one answer); ``prompt`` None continues that turn as it was.
    """
    output = output or Output()
    no_color = bool(os.environ.get("NO_COLOR"))
    out = SafeConsole(file=sys.stdout, no_color=no_color, highlight=False, soft_wrap=True)
    err = SafeConsole(file=sys.stderr, no_color=no_color, highlight=False, soft_wrap=True)
    json_output = output.format == "json"
    try:
        started = boot(options, dict(os.environ))
    except SetupError as problem:
        return _usage_error(str(problem), None, err, output)
    report = RunReport(options.workspace)
    run = _Run(started, output, out, err, report)
    try:
        agent = build_agent(
            started.config,
            options,
            face=run.face,
            approver=None,
            environ=started.environ,
            redactor=started.redactor,
        )
    except SetupError as problem:
        return _usage_error(str(problem), None, err, output)
    run.bind(agent)
    if (held_back := started.trust.held) is not None:
        held = f"{held_back.describe()}. Not applied: run `agent trust` here to allow it."
        err.print(f"[yellow]! {escape(held)}[/yellow]")
    if prompt is None and not output.stream_input and not agent.stopped_mid_turn:
        agent.close()
        nothing = (
            f"Session {agent.session_id} did not stop mid-turn, so there is nothing to continue. "
            f'Give a prompt: agent -p "..." --resume {agent.session_id}'
        )
        return _usage_error(nothing, agent.session_id, err, output)
    for start_notice in agent.notices:
        err.print(notice_line(start_notice))
    if agent.mcp.pending:
        from agent.setup.mcp_setup import pending_notice

        err.print(f"[yellow]! {escape(pending_notice(agent.mcp.pending))}[/yellow]")
    if run.stream is not None and (moved := report.workspace_moved) is not None:
        err.print(f"[yellow]! {escape(moved.describe())}[/yellow]")  # the other faces said it
    for notice in agent.resume_notices():
        err.print(f"[yellow]! {escape(notice)}[/yellow]")
    # With stream-json input the command line gave no prompt (`agent.cli` refuses one).
    prompts = (
        stdin_prompts(started, agent, run.stream)
        if output.stream_input
        else argument_prompts(prompt, started, agent)
    )
    if isinstance(prompts, str):
        agent.close()
        return _usage_error(prompts, agent.session_id, err, output)
    code = _run_guarded(agent, prompts, run)
    if run.ui is not None:
        run.ui.finish()
    if agent.chaos is not None:
        err.print(escape(chaos_report(agent.chaos, unwrapped(agent.recorded))), style="yellow")
    agent.close()
    if not json_output and output.format != "stream-json" and run.last_error:
        # Errors quote the server, whose "[...]" must not be read as rich markup.
        err.print(f"[red]{escape(run.last_error)}[/red]")
    hint = agent.resume_hint()
    # A session not saved is said in every format, even after a turn that went well.
    if hint and (agent.save_failure or (code != ExitCode.OK and output.format != "stream-json")):
        err.print(hint, markup=False, highlight=False)
    return code


class _Run:
    """One ``-p`` run: its faces, and what it reports after each turn."""

    def __init__(
        self, started: Started, output: Output, out: Console, err: Console, report: RunReport
    ) -> None:
        self.started = started
        self.output = output
        self.out = out
        self.report = report
        self.last_error: str | None = None
        self.stream: StreamJsonFace | None = None
        self.ui: ConsoleUI | None = None
        self.agent: Agent | None = None
        main: Face
        if output.format == "stream-json":
            self.stream = StreamJsonFace(
                sys.stdout,
                session_id="",
                model=lambda: self.agent.model if self.agent is not None else "",
                redact=started.redact,
                partial=output.partial,
            )
            main = self.stream
        else:
            # Text already written to a pipe cannot be taken back when a stream restarts, so
            # a pipe gets the finished answer once, at the end; a terminal sees it stream.
            live = output.format == "text" and out.is_terminal
            self.ui = ConsoleUI(
                out, err, stream=live, verbose=started.options.verbose, redact=started.redact
            )
            main = self.ui
        self.face = Faces([main, report])

    def bind(self, agent: Agent) -> None:
        """The agent is built: the stream can say what it starts with."""
        self.agent = agent
        if self.stream is not None:
            self.stream.session_id = agent.session_id
            mode = agent.permissions.modes.mode if agent.permissions else "default"
            start = {**agent.describe_start(), "permissionMode": mode, "version": __version__}
            self.stream.start(start)

    def turn_ended(self, status: TurnStatus, result: TurnResult | None, code: int) -> None:
        """Report one turn: the answer, or the result object."""
        agent = self.agent
        assert agent is not None
        redact = self.started.redactor
        error = (
            result.error
            if result
            else ("Interrupted." if status is TurnStatus.INTERRUPTED else None)
        )
        self.last_error = redact.text(error) if error else None
        answer = redact.text(result.answer) if result else ""
        fields = {
            "subtype": result_subtype(status, result),
            "is_error": status is not TurnStatus.DONE,
            "result": answer,
            "session_id": agent.session_id,
            **self.report.fields(),
            "duration_api_ms": round(agent.api_seconds * 1000),
            "usage": agent.usage.model_dump(),
            "usage_by_purpose": {k: u.model_dump() for k, u in agent.usage_by_purpose().items()},
            "total_cost_usd": agent.cost_usd(),
            "exit_code": code,
        }
        if code == ExitCode.UNAVAILABLE:
            fields["retry_after"] = self.report.retry_after
            fields["resume"] = f"agent --resume {agent.session_id}"
        if self.stream is not None:
            if failure := agent.save_failure:
                self.stream.system("session_not_saved", error=failure)
            elif status is not TurnStatus.DONE:
                self.stream.system("session_saved", resume=f"agent --resume {agent.session_id}")
            self.stream.write({"type": "result", **fields})
        elif self.output.format == "json":
            events = [redact.value(event.model_dump(mode="json")) for event in agent.recorded]
            payload = _payload(
                agent.session_id, status.value, answer, self.last_error, events, None
            )
            print(json.dumps({**payload, **fields, "result": answer}))
        elif self.ui is not None and not self.ui.stream and answer:
            self.out.print(answer, markup=False, highlight=False, emoji=False)


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


def _usage_error(problem: str, session_id: str | None, err: Console, output: Output) -> int:
    if output.format == "json":
        print(json.dumps(_payload(session_id, "error", "", problem, [], None)))
    elif output.format == "stream-json":
        line = {"type": "result", "subtype": "error_usage", "is_error": True, "result": problem}
        print(json.dumps({**line, "session_id": session_id, "exit_code": ExitCode.USAGE}))
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


def _run_guarded(agent: Agent, prompts: AsyncIterator[str | None], run: _Run) -> int:
    """Run each prompt's turn; SIGINT, SIGTERM and SIGHUP cancel the run and leave the
    session consistent. Returns the exit code of the last turn."""
    stopped_by: list[int] = []
    code: int = ExitCode.OK

    async def main() -> None:
        nonlocal code
        task = asyncio.current_task()
        assert task is not None
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            running.add_signal_handler(sig, _stop, task, sig)
        async for prompt in prompts:
            result = await agent.run_turn(prompt)
            code = exit_code(result.status, result)
            run.turn_ended(result.status, result, code)
        await agent.end("other")

    def _stop(task: asyncio.Task[None], sig: int) -> None:
        stopped_by.append(sig)
        task.cancel()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        agent.interrupted()
        code = ExitCode.TERMINATED if signal.SIGTERM in stopped_by else ExitCode.INTERRUPTED
        run.turn_ended(TurnStatus.INTERRUPTED, None, code)
    except Exception as error:  # the session must stay consistent whatever went wrong
        log.exception("turn_crashed")
        message = f"Internal error: {error!r}. Details are in the log."
        agent.record_crash(message)
        failed = TurnResult(status=TurnStatus.FAILED, error=message)
        code = ExitCode.FAILED
        run.turn_ended(TurnStatus.FAILED, failed, code)
    return code


def exit_code(status: TurnStatus, result: TurnResult | None) -> int:
    """The exit code of a turn that ended with ``status``."""
    if status is TurnStatus.DONE:
        return ExitCode.OK
    if status is TurnStatus.INTERRUPTED:
        return ExitCode.INTERRUPTED
    return ExitCode.UNAVAILABLE if provider_unavailable(result) else ExitCode.FAILED
