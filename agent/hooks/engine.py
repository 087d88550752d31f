"""`Hooks`: the configured hooks as one object — a ``before_tool`` hook, a `Face`, and the
lifecycle calls the wiring awaits."""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import structlog

from agent.engine.outcome import (
    SideModelSwitch,
    SubagentFallback,
    SubagentFinished,
    SubagentStarted,
    TurnEnded,
    TurnStatus,
)
from agent.hooks.runner import OUTPUT_LIMIT, HookVerdict, run_hook
from agent.hooks.settings import HookEvent, HookMatcher, claude_tool_name
from agent.permissions.modes import CLAUDE_NAMES, Modes
from compaction import CompactionStarted
from compaction.events import Reason
from providers import (
    ErrorKind,
    Event,
    EventSink,
    Message,
    Notice,
    StreamDelta,
    ToolResultBlock,
    ToolUseBlock,
)
from recovery.events import FallbackActivated, GaveUp
from tools import Permit, Refusal, ToolInvocation, ToolRefused

log = structlog.get_logger("agent.hooks")

PERMISSION_MODES = CLAUDE_NAMES
"""Our approval modes under Claude Code's ``permission_mode`` names."""


_NOT_THE_PROVIDER = {ErrorKind.CONTEXT_OVERFLOW, ErrorKind.BAD_REQUEST, ErrorKind.REFUSAL}
_LOOP_STOPS = {TurnStatus.MAX_STEPS, TurnStatus.REPEATED_CALL}


class Hooks:
    """Runs the configured command hooks at each event, with Claude Code's contract.

    Args:
        settings: The ``hooks:`` configuration (event name → matcher entries).
        workspace: The hooks' working directory, ``cwd`` and ``$CLAUDE_PROJECT_DIR``.
        session_id: Sent as ``session_id``; set the attribute when the session changes.
        transcript_path: The session file, sent as ``transcript_path``; settable too.
        modes: The session's permission mode, sent as ``permission_mode`` (read as each
            hook runs).
        events: Where hooks' ``systemMessage`` and non-blocking errors go, as `Notice`.
        environ: The hooks' environment (default: this process's).
        output_limit: Bytes kept of each hook's stdout and of its stderr.
    """

    def __init__(
        self,
        settings: Mapping[str, Sequence[HookMatcher]],
        *,
        workspace: Path,
        session_id: str,
        transcript_path: Path | None = None,
        modes: Modes | None = None,
        events: EventSink | None = None,
        environ: Mapping[str, str] | None = None,
        output_limit: int = OUTPUT_LIMIT,
    ) -> None:
        self._settings = {name: list(entries) for name, entries in settings.items()}
        self._workspace = workspace
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.modes = modes or Modes()
        self._events = events
        env = dict(os.environ if environ is None else environ)
        self._env = env | {
            "CLAUDE_PROJECT_DIR": str(workspace),
            "AGENT_PROJECT_DIR": str(workspace),
        }
        self._limit = output_limit
        self._pending: set[asyncio.Task[None]] = set()
        self._own_notices: deque[Event] = deque(maxlen=32)
        self._refused: deque[str] = deque(maxlen=64)
        self._feedback: list[str] = []

    def configured(self, event: HookEvent) -> bool:
        """Whether any hook is set up for ``event``."""
        return bool(self._settings.get(event))

    # -- tool calls -------------------------------------------------------------------------

    async def before_tool(self, invocation: ToolInvocation) -> Refusal | Permit | None:
        """PreToolUse, as a `tools.BeforeToolHook`: a block or ``deny`` refuses the call (the
        reason goes to the model), ``ask`` forces the approval prompt, ``allow`` skips it,
        ``updatedInput`` replaces the input (validated again by the executor)."""
        call = invocation.call
        verdicts = await self._fire(
            "PreToolUse", call.name, _tool_fields(call), block_is_reason=True
        )
        reasons = [v.block for v in verdicts if v.block] or [v.stop for v in verdicts if v.stop]
        if reasons:
            return Refusal(
                "; ".join(r for r in reasons if r),
                "do not retry this call; a hook the person set up refused it",
                by="hook",
            )
        self._feedback += [v.context for v in verdicts if v.context]
        permissions = {v.permission for v in verdicts}
        decision: Literal["allow", "ask"] | None = None
        if permissions & {"ask", "allow"}:
            decision = "ask" if "ask" in permissions else "allow"
        updated = next((v.updated_input for v in reversed(verdicts) if v.updated_input), None)
        if updated is not None:
            updated = our_tool_input(call.name, call.input, updated)
        if decision is None and updated is None:
            return None
        why = _joined(v.permission_reason for v in verdicts if v.permission == decision)
        return Permit(decision=decision, updated_input=updated, reason=why or "")

    def take_feedback(self) -> list[str]:
        """What PostToolUse hooks (a block's reason, ``additionalContext``) and PreToolUse's
        ``additionalContext`` said for the model since the last call; the wiring adds it to
        the next request. Await `drain` first."""
        feedback, self._feedback = self._feedback, []
        return feedback

    # -- the Face ---------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """Notification for a `Notice`; Recovery for a fallback (the session's, a sub-agent's
        on a model of its own, naming it, or ``small_model``'s, tagged so), a provider that
        gave up on a turn's request (not on a side request: web_fetch's answer goes on without
        it), and a loop stopped (too many steps, the same call again and again)."""
        if isinstance(event, ToolRefused):
            self._refused.append(event.tool_use_id)
        elif isinstance(event, Notice) and not any(event is own for own in self._own_notices):
            fields = {"message": event.text, "notification_type": event.level}
            self._schedule(self._fire("Notification", event.level, fields))
        elif isinstance(event, FallbackActivated):
            self._schedule(self.recovery("fallback", _fallback(event)))
        elif isinstance(event, SubagentFallback):  # a child's own model: the same hook, named
            child = {"agent_type": event.agent_type, "agent_id": event.agent_id}
            self._schedule(self.recovery("fallback", _fallback(event.switch) | child))
        elif isinstance(event, SideModelSwitch) and isinstance(event.switch, FallbackActivated):
            side = _fallback(event.switch) | event.tags  # small_model's: the session's stays
            self._schedule(self.recovery("fallback", side))
        elif (
            isinstance(event, GaveUp)
            and event.kind not in _NOT_THE_PROVIDER
            and not event.side_request  # its caller goes on without the answer
        ):
            details = {"error_kind": str(event.kind), "message": event.message}
            self._schedule(self.recovery("provider_unavailable", details))
        elif isinstance(event, CompactionStarted) and event.reason is not Reason.MANUAL:
            # /compact awaits pre_compact itself; the engine's own compaction is announced.
            self._schedule(self.pre_compact("auto"))
        elif isinstance(event, SubagentStarted):
            fields = {"agent_id": event.agent_id, "agent_type": event.agent_type}
            self._schedule(self._fire("SubagentStart", event.agent_type, fields))
        elif isinstance(event, SubagentFinished):
            stopped: dict[str, Any] = {
                "agent_id": event.agent_id,
                "agent_type": event.agent_type,
                "agent_transcript_path": event.transcript_path,
                "stop_hook_active": False,
            }
            self._schedule(self._fire("SubagentStop", event.agent_type, stopped))
        elif isinstance(event, TurnEnded) and event.status in _LOOP_STOPS:
            stopped = {"status": str(event.status), "steps": event.steps, "error": event.error}
            self._schedule(self.recovery("loop_stopped", stopped))

    def on_delta(self, delta: StreamDelta) -> None:
        """Nothing: no hook event is about streamed text."""

    def on_message(self, message: Message) -> None:
        """Nothing: prompts go through `user_prompt`, answers through `stop`."""

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """PostToolUse, or PostToolUseFailure for an error result (not for a refused call,
        which never ran)."""
        if call.id in self._refused:
            return
        fields = _tool_fields(call)
        if result.is_error:
            fields |= {"error": result.content, "is_interrupt": False}
            self._schedule(self._post_tool("PostToolUseFailure", call, fields))
        else:
            fields["tool_response"] = result.content
            self._schedule(self._post_tool("PostToolUse", call, fields))

    async def drain(self) -> None:
        """Wait for the hooks the face started (PostToolUse, Notification, Recovery)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    # -- lifecycle --------------------------------------------------------------------------

    async def user_prompt(self, prompt: str) -> tuple[str | None, str | None]:
        """UserPromptSubmit: ``(why the prompt is blocked, context to add to it)``."""
        verdicts = await self._fire("UserPromptSubmit", None, {"prompt": prompt})
        blocked = [v.stop or v.block for v in verdicts if v.stop or v.block]
        if blocked:
            return "; ".join(b for b in blocked if b), None
        return None, _joined(v.context for v in verdicts)

    async def stop(self, *, active: bool = False, last_message: str = "") -> str | None:
        """Stop, once the model answered: the reason the model must go on (a block), or None
        to let the turn end. ``active`` is true when this turn was already a Stop hook's."""
        fields = {"stop_hook_active": active, "last_assistant_message": last_message}
        verdicts = await self._fire("Stop", None, fields)
        if any(v.stop for v in verdicts):
            return None  # continue: false wins over a block, as in Claude Code
        return _joined(v.block for v in verdicts)

    async def session_start(self, source: str, *, model: str = "") -> str | None:
        """SessionStart (``startup``, ``resume``, ``clear``, ``compact``): context to add."""
        verdicts = await self._fire("SessionStart", source, {"source": source, "model": model})
        return _joined(v.context for v in verdicts)

    async def session_end(self, reason: str) -> None:
        """SessionEnd (``prompt_input_exit``, ``clear``, ``logout``, ``other``)."""
        await self._fire("SessionEnd", None, {"reason": reason})

    async def pre_compact(self, trigger: str, instructions: str = "") -> None:
        """PreCompact (``manual`` or ``auto``), before the conversation is compacted."""
        fields = {"trigger": trigger, "custom_instructions": instructions}
        await self._fire("PreCompact", trigger, fields)

    async def recovery(self, kind: str, details: Mapping[str, Any]) -> None:
        """Recovery (ours): ``fallback``, ``provider_unavailable`` or ``loop_stopped``."""
        await self._fire("Recovery", kind, {"kind": kind, "details": dict(details)})

    # -- running ----------------------------------------------------------------------------

    async def _post_tool(
        self, event: HookEvent, call: ToolUseBlock, fields: dict[str, Any]
    ) -> None:
        verdicts = await self._fire(event, call.name, fields)
        for text in [*(v.block for v in verdicts), *(v.context for v in verdicts)]:
            if text:
                self._feedback.append(f"{event} hook on {call.name}: {text}")

    async def _fire(
        self,
        event: HookEvent,
        name: str | None,
        fields: Mapping[str, Any],
        *,
        block_is_reason: bool = False,
    ) -> list[HookVerdict]:
        commands = {
            hook.command: hook
            for entry in self._settings.get(event, ())
            if entry.matches(name)
            for hook in entry.hooks
        }  # the same command twice runs once, as in Claude Code
        if not commands:
            return []
        payload = self._common(event) | dict(fields)
        runs = [
            run_hook(hook, payload, cwd=self._workspace, env=self._env, limit=self._limit)
            for hook in commands.values()
        ]
        verdicts = list(await asyncio.gather(*runs))
        for verdict in verdicts:
            if verdict.message:
                self._notice(verdict.message, "info")
            if verdict.error:
                self._notice(f"{event} {verdict.error}", "warning")
            if verdict.block and not block_is_reason and event in _SHOWN_BLOCKS:
                self._notice(f"{event} hook: {verdict.block}", "warning")
            if verdict.stop and event not in _CAN_STOP:
                self._notice(f"{event} hook asked to stop: {verdict.stop}", "warning")
        return verdicts

    def _common(self, event: HookEvent) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript_path or ""),
            "cwd": str(self._workspace),
            "hook_event_name": event,
            "permission_mode": self.modes.mode,
        }

    def _notice(self, text: str, level: str) -> None:
        notice = Notice(text=text, level="info" if level == "info" else "warning")
        self._own_notices.append(notice)
        if self._events is not None:
            self._events(notice)

    def _schedule(self, work: Awaitable[Any]) -> None:
        try:
            task = asyncio.get_running_loop().create_task(_quietly(work))
        except RuntimeError:  # no loop: a face called outside the engine
            if asyncio.iscoroutine(work):
                work.close()
            return
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


# Events whose block cannot stop anything: the person is told instead (Claude Code shows
# their exit-2 stderr to the user).
_SHOWN_BLOCKS = {"SessionStart", "SessionEnd", "Notification", "PreCompact", "Recovery"}
# Events whose ``continue: false`` can act; for the others it is shown to the person.
_CAN_STOP = {"PreToolUse", "UserPromptSubmit", "Stop"}


def _fallback(event: FallbackActivated) -> dict[str, Any]:
    """Recovery's ``details`` for a fallback."""
    return {"from_model": event.from_model, "to_model": event.to_model, "reason": event.reason}


def _tool_fields(call: ToolUseBlock) -> dict[str, Any]:
    return {
        "tool_name": claude_tool_name(call.name),
        "tool_input": claude_tool_input(call.name, call.input),
        "tool_use_id": call.id,
    }


_FILE_PATH_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
"""Claude Code's Read, Write and Edit name their file ``file_path``; ours, ``path``."""


def claude_tool_input(tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """``tool_input`` as hooks get it: a file tool's ``path`` also as ``file_path``, so a hook
    written for Claude Code (``.tool_input.file_path``) works unchanged."""
    shown = dict(tool_input)
    if tool in _FILE_PATH_TOOLS and "path" in shown:
        shown.setdefault("file_path", shown["path"])
    return shown


def our_tool_input(
    tool: str, sent: Mapping[str, Any], updated: Mapping[str, Any]
) -> dict[str, Any]:
    """A PreToolUse hook's ``updatedInput`` in our names: a ``file_path`` the hook changed (or
    gave alone, as for Claude Code) is the ``path``."""
    ours = dict(updated)
    if tool not in _FILE_PATH_TOOLS or "file_path" not in ours:
        return ours
    file_path = ours.pop("file_path")
    if "path" not in ours or file_path != claude_tool_input(tool, sent).get("file_path"):
        ours["path"] = file_path
    return ours


def _joined(texts: Any) -> str | None:
    kept = [text for text in texts if text]
    return "\n".join(kept) if kept else None


async def _quietly(work: Awaitable[Any]) -> None:
    try:
        await work
    except asyncio.CancelledError:
        raise
    except Exception:  # a face's hook must never fail the turn
        log.exception("hook_failed")
