"""``agent acp``: the Agent Client Protocol server an editor starts (protocol version 1).

Each method maps onto what the terminal does: ``session/new`` is starting ``agent`` in a
directory, ``session/load`` is ``--resume`` (the history replayed as updates),
``session/prompt`` is one turn of the same engine (`Agent.run_turn`), ``session/cancel`` is
Ctrl-C (the dangling tool calls answered, the turn recorded as interrupted). A turn that fails
is a JSON-RPC error saying what happened and when to try again; the session stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

import structlog
from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.interfaces import Agent as AcpAgent
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
)

from agent import __version__
from agent.acp.listing import list_saved
from agent.acp.modes import approve_plan, mode_state, switch_mode
from agent.acp.options import MODEL, config_options, options_update, set_option
from agent.acp.replay import history_updates
from agent.acp.sessions import EditorSession, open_session, prompt_parts
from agent.acp.transport import StdioTransport, claim_stdout
from agent.acp.updates import plan_update
from agent.engine.outcome import TurnResult, TurnStatus
from agent.exit_codes import ExitCode
from agent.permissions.plan import GO_AHEAD, planned
from agent.script.report import provider_unavailable
from agent.setup.config import agent_home
from agent.setup.startup import Options
from providers import ErrorKind
from tools.todos import last_todos

log = structlog.get_logger("agent.acp")
Done = TypeVar("Done")

PROVIDER_UNAVAILABLE = -32010
"""No model could answer, after every retry and fallback: try again later (``data.retryAfter``)."""
TURN_FAILED = -32011
"""The turn failed for another reason (a key, a request the provider refuses); the message
says what to change."""
SESSION_BUSY = -32012
"""A prompt arrived while the session was still answering the previous one."""

_STOPS: dict[TurnStatus, StopReason] = {
    TurnStatus.MAX_STEPS: "max_turn_requests",
    TurnStatus.REPEATED_CALL: "max_turn_requests",
    TurnStatus.INTERRUPTED: "cancelled",
}


class AcpServer:
    """The ACP agent side (`acp.interfaces.Agent`): sessions by id, one turn each at a time.

    Args:
        template: The command line's options (model, approval, ``--set``); each session
            takes them with its own workspace.
        environ: The environment each session starts with.
        transport: The connection's transport (each session's secrets are hidden in it).
    """

    def __init__(
        self, template: Options, environ: dict[str, str], transport: StdioTransport
    ) -> None:
        self.template = template
        self.environ = environ
        self.transport = transport
        self.sessions: dict[str, EditorSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None, "on_connect comes first"
        return self._client

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        """Our version (1) whatever the client asks: the client decides whether it can go on."""
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="agent", title="agent", version=__version__),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        session = open_session(self.client, self.template, self.environ, cwd, mcp_servers)
        self._add(session)
        session.show_start_notices()  # queued: sent once the editor knows the session's id
        agent = session.agent
        modes, options = mode_state(agent.permissions), config_options(agent)
        return NewSessionResponse(session_id=agent.session_id, modes=modes, config_options=options)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        if (open_one := self.sessions.get(session_id)) is not None:
            if open_one.turn is not None:
                raise _busy(session_id)
            await open_one.close()
            del self.sessions[session_id]
        session = open_session(
            self.client, self.template, self.environ, cwd, mcp_servers, resume=session_id
        )
        self._add(session)
        loaded = session.agent.loaded
        history = history_updates(loaded.messages if loaded else [], session.face.workspace)
        for update in history:
            session.outbox.put(update)
        if loaded is not None and (todos := last_todos(loaded.events)):
            session.outbox.put(plan_update(todos))  # the plan as the session left it
        session.show_start_notices()  # after the history they are about
        await session.outbox.drain()
        agent = session.agent
        return LoadSessionResponse(
            modes=mode_state(agent.permissions), config_options=config_options(agent)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        return list_saved(agent_home(self.environ), cwd, cursor)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == MODEL and session.turn is not None:
            raise _busy(session_id)  # the model changes between turns, as /model does
        return SetSessionConfigOptionResponse(
            config_options=set_option(session.agent, config_id, value)
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        switch_mode(self._session(session_id).agent.permissions, mode_id)
        return SetSessionModeResponse()

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.turn is not None:
            raise _busy(session_id)
        permissions = session.agent.permissions
        text, images = await asyncio.to_thread(prompt_parts, prompt)
        if images and (why := session.agent.attach_images(images)):
            raise RequestError.invalid_params({"prompt": why})
        text = planned(text, permissions is not None and permissions.modes.plan_mode)
        menus = _menus(session)
        session.face.begin_turn()
        session.cancelled = False
        session.outbox.open()
        result = await self._guarded(session, session.agent.run_turn(text))
        if result is not None and self._plan_done(session, result):
            assert permissions is not None
            ask, outbox = session.approver.ask, session.outbox
            question = approve_plan(permissions, ask, outbox, result.answer)
            if approved := await self._guarded(session, question, turn=False):
                session.face.begin_turn()
                result = await self._guarded(session, session.agent.run_turn(GO_AHEAD))
            elif approved is None:
                result = None
        if _menus(session) != menus:  # a fallback, its return, or an approved plan
            session.outbox.put(options_update(session.agent))
        if result is None:
            await session.outbox.drain()
            return PromptResponse(stop_reason="cancelled")
        stop = _stop_reason(result, session)
        await session.outbox.drain()
        return PromptResponse(stop_reason=stop)

    @staticmethod
    def _plan_done(session: EditorSession, result: TurnResult) -> bool:
        permissions = session.agent.permissions
        done = result.status is TurnStatus.DONE and not session.face.truncated
        return done and permissions is not None and permissions.modes.plan_mode

    async def _guarded(
        self, session: EditorSession, work: Coroutine[Any, Any, Done], turn: bool = True
    ) -> Done | None:
        """Run ``work`` as the session's turn: None when ``session/cancel`` stopped it."""
        task = asyncio.create_task(work, name=f"turn-{session.agent.session_id}")
        session.turn = task
        try:
            return await task
        except asyncio.CancelledError:
            if turn:
                session.agent.interrupted()
            current = asyncio.current_task()
            if not session.cancelled or (current is not None and current.cancelling()):
                raise  # the connection is closing: nobody waits for an answer
            await session.outbox.drain()
            return None
        except Exception as error:  # the session must stay consistent whatever went wrong
            log.exception("turn_crashed")
            message = f"Internal error: {error!r}. Details are in the log."
            session.agent.record_crash(message)
            await session.outbox.drain()
            raise RequestError(
                TURN_FAILED, message, {"sessionId": session.agent.session_id}
            ) from None
        finally:
            session.turn = None

    async def cancel(self, session_id: str, **_: Any) -> None:
        """Ctrl-C for that session's turn (a notification: no answer, none expected)."""
        session = self.sessions.get(session_id)
        if session is not None and session.turn is not None and not session.turn.done():
            session.cancelled = True
            session.turn.cancel()

    def _add(self, session: EditorSession) -> None:
        self.sessions[session.agent.session_id] = session
        self.transport.redactors.append(session.agent.redact)

    def _session(self, session_id: str) -> EditorSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": f"no open session {session_id!r}: create or load it first"}
            )
        return session

    async def close_all(self) -> None:
        """End every session: running turns are interrupted, sessions saved."""
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception:
                log.exception("session_close_failed", session=session.agent.session_id)
        self.sessions.clear()


def _menus(session: EditorSession) -> tuple[str, str]:
    """The model and mode now: the config options an editor shows."""
    permissions = session.agent.permissions
    return session.agent.model, permissions.modes.mode if permissions else "default"


def _busy(session_id: str) -> RequestError:
    return RequestError(
        SESSION_BUSY,
        f"Session {session_id} is still answering the previous prompt. Wait for its "
        "response, or send session/cancel, then prompt again.",
        {"sessionId": session_id},
    )


def _stop_reason(result: TurnResult, session: EditorSession) -> StopReason:
    """The true stop reason, or the JSON-RPC error of a failed turn (raised)."""
    if result.status is TurnStatus.DONE:
        return "max_tokens" if session.face.truncated else "end_turn"
    if result.status is TurnStatus.FAILED and result.error_kind is ErrorKind.REFUSAL:
        session.face.notice(result.error or "The model declined.")
        return "refusal"
    if result.status in _STOPS:
        if result.error:
            session.face.notice(result.error)
        return _STOPS[result.status]
    raise _failure(result, session)


def _failure(result: TurnResult, session: EditorSession) -> RequestError:
    """What happened, and when to try again; the session is kept for the next prompt."""
    error = session.agent.redact(result.error or "The turn failed.")
    wait = session.face.retry_after
    retry_after = math.ceil(wait) if wait is not None else None
    unavailable = provider_unavailable(result)
    if unavailable and retry_after:
        message = f"{error} Retry after {retry_after} s."
    elif unavailable:
        message = error  # the engine's sentence says when to try again already
    else:
        message = f"{error} The session is kept: fix that, then send the prompt again."
    return RequestError(
        PROVIDER_UNAVAILABLE if unavailable else TURN_FAILED,
        message,
        {
            "sessionId": session.agent.session_id,
            "errorKind": result.error_kind.value if result.error_kind else None,
            "transient": unavailable,
            "retryAfter": retry_after,
            "resume": f"agent --resume {session.agent.session_id}",
        },
    )


def serve(template: Options) -> int:
    """Run the server on stdin/stdout until the client goes away or a signal; exit code."""
    protocol = claim_stdout()
    return asyncio.run(_serve(template, protocol))


async def _serve(template: Options, protocol: int) -> int:
    transport = StdioTransport(sys.stdin.fileno(), protocol)
    server = AcpServer(template, dict(os.environ), transport)
    main = asyncio.current_task()
    assert main is not None
    stopped_by: list[int] = []

    def stop(sig: int) -> None:
        stopped_by.append(sig)
        main.cancel()

    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        running.add_signal_handler(sig, stop, sig)
    try:
        # AcpServer answers the methods it supports; the SDK answers the rest (not found).
        await run_agent(cast(AcpAgent, server), transport)
    except asyncio.CancelledError:
        log.info("acp_stopped", signal=stopped_by[0] if stopped_by else None)
    finally:
        await server.close_all()
        with contextlib.suppress(Exception):
            await transport.close()
    if signal.SIGTERM in stopped_by:
        return ExitCode.TERMINATED
    return ExitCode.INTERRUPTED if stopped_by else ExitCode.OK
