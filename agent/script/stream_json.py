"""``--output-format stream-json``: the run as JSON lines, in Claude Code's shapes.

One object per line on stdout, flushed per event: ``system``/``init`` first, then
``assistant`` and ``user`` messages (Anthropic-shaped, whatever the provider), optional
``stream_event`` text deltas, the recovery events as ``system`` subtypes (a sub-agent's
retries, waits, give-ups and model switches tagged with ``parent_tool_use_id``, as its messages
are; ``small_model``'s switches tagged with ``model_role``), a change of the permission mode
as a ``system``/``status`` line, a resumed session's move to this directory as
``system``/``workspace_moved``, and one ``result`` last. Nothing else is written to stdout.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import IO, Any

from agent.engine.outcome import ChildsRecovery, SideModelSwitch
from agent.engine.turn import ContinuationRequested
from agent.permissions.modes import ModeChanged
from agent.setup.endpoint_guard import EndpointAnswers, EndpointUnreachable
from agent.setup.session_start import WorkspaceMoved
from compaction import CompactionApplied
from compaction.events import Reason
from providers import Event, Message, Notice, StreamDelta, TextDelta, ToolResultBlock, ToolUseBlock
from providers.adapters.anthropic_mapping import anthropic_blocks
from recovery import FallbackActivated, GaveUp, ModelRestored, RequestHeld, RetryScheduled
from tools.events import ProtectedPathsRestored, ToolRepeatedCall, ToolRepeatedFailure, ToolRetried

_TRIGGERS = {Reason.PROACTIVE: "auto", Reason.REACTIVE: "overflow", Reason.MANUAL: "manual"}


def recovery_fields(event: Event) -> dict[str, Any] | None:
    """A ``system`` event's subtype and fields for a recovery event; None for the rest."""
    if isinstance(event, EndpointUnreachable):
        return {
            "subtype": "endpoint_unreachable",
            "url": event.url,
            "reason": event.reason,
            "retry_for_seconds": event.window,
        }
    if isinstance(event, EndpointAnswers):
        return {"subtype": "endpoint_answers", "url": event.url}
    if isinstance(event, RetryScheduled):
        return {
            "subtype": "api_retry",
            "attempt": event.attempt,
            "max_retries": event.max_attempts,
            "retry_delay_ms": round(event.delay * 1000),
            "error_status": event.status,
            "error": event.kind.value,
            "model": event.model,
            "message": event.message,
        }
    if isinstance(event, FallbackActivated):
        return {
            "subtype": "model_fallback",
            "from": event.from_model,
            "to": event.to_model,
            "reason": event.reason,
            "returns_in": event.returns_in,
            "stays_because": event.stays_because,
        }
    if isinstance(event, ModelRestored):
        return {
            "subtype": "model_restored",
            "model": event.model,
            "from": event.from_model,
            "after_seconds": round(event.after, 1),
        }
    if isinstance(event, ChildsRecovery):  # a child's: tagged as its messages are
        child = {"agent_type": event.agent_type, "agent_id": event.agent_id}
        fields = recovery_fields(event.inner) or {}
        return {**fields, **child, "parent_tool_use_id": event.tool_use_id}
    if isinstance(event, SideModelSwitch):  # small_model's: the session's model did not move
        fields = recovery_fields(event.switch) or {}
        return {**fields, **event.tags}
    if isinstance(event, CompactionApplied):
        trigger = _TRIGGERS.get(event.reason, "auto")
        return {
            "subtype": "compact_boundary",
            "compact_metadata": {
                "trigger": trigger,
                "pre_tokens": event.tokens_before,
                "post_tokens": event.tokens_after,
            },
            "trigger": trigger,
            "pre_tokens": event.tokens_before,
            "post_tokens": event.tokens_after,
        }
    if isinstance(event, ContinuationRequested):
        return {"subtype": "continuation", "attempt": event.attempt, "limit": event.limit}
    if isinstance(event, ToolRetried):
        return {
            "subtype": "tool_retry",
            "tool": event.tool,
            "tool_use_id": event.tool_use_id,
            "attempt": event.attempt,
            "retry_delay_ms": round(event.delay * 1000),
            "error": event.message,
        }
    if isinstance(event, ToolRepeatedCall | ToolRepeatedFailure) and event.limit_reached:
        return {"subtype": "loop_stopped", "tool": event.tool, "count": event.count}
    if isinstance(event, RequestHeld):
        reason = "server retry-after" if event.server else "shared rate-limit headroom"
        if event.server and event.other_agent:
            reason = "server retry-after told to another agent on this key"
        return {"subtype": "shared_wait", "seconds": event.delay, "reason": reason}
    if isinstance(event, ProtectedPathsRestored):
        return {"subtype": "protected_restored", "paths": event.paths}
    if isinstance(event, GaveUp):
        return {
            "subtype": "gave_up",
            "error": event.kind.value,
            "requests": event.requests,
            "retry_after": event.retry_after,
            "purpose": event.purpose.value,  # a side request's fails no turn
        }
    if isinstance(event, Notice):
        return {"subtype": "notice", "level": event.level, "text": event.text}
    return None


class StreamJsonFace:
    """Writes the engine's stream to ``out`` as JSON lines.

    Args:
        out: Standard output, usually.
        session_id: The session every line names.
        model: The model answering now (a fallback, after a switch).
        redact: Hides secrets in everything written.
        partial: Also write ``stream_event`` text deltas (``--include-partial-messages``).
    """

    def __init__(
        self,
        out: IO[str],
        *,
        session_id: str,
        model: Callable[[], str],
        redact: Callable[[str], str],
        partial: bool = False,
    ) -> None:
        self._out = out
        self.session_id = session_id
        self._model = model
        self._redact = redact
        self._partial = partial
        self._held: list[dict[str, Any]] | None = []
        """Lines that came before ``init``; the stream begins with it (`start`)."""

    def start(self, init: dict[str, Any]) -> None:
        """Write the ``system``/``init`` line, then whatever happened while starting."""
        held, self._held = self._held or [], None
        self.system("init", **init)
        for line in held:
            self.write({**line, "session_id": self.session_id})

    def write(self, line: dict[str, Any]) -> None:
        """One line, secrets hidden, flushed at once; a closed reader is not an error."""
        if self._held is not None:
            self._held.append(line)
            return
        text = self._redact(json.dumps(line, ensure_ascii=False))
        try:
            self._out.write(text + "\n")
            self._out.flush()
        except (BrokenPipeError, ValueError):
            pass

    def system(self, subtype: str, **fields: Any) -> None:
        self.write({"type": "system", "subtype": subtype, **fields, **self._ids()})

    def on_event(self, event: Event) -> None:
        if isinstance(event, ModeChanged):  # Claude Code's status message
            self.system("status", status=None, permissionMode=event.mode)
            return
        if isinstance(event, WorkspaceMoved):
            moved = {"started_in": event.started_in, "cwd": event.workspace}
            self.system("workspace_moved", **moved, message=event.describe())
            return
        fields = recovery_fields(event)
        if fields is not None:
            self.write({"type": "system", **fields, **self._ids()})

    def on_delta(self, delta: StreamDelta) -> None:
        if not self._partial or not isinstance(delta, TextDelta):
            return
        self.write(
            {
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": delta.text},
                },
                "parent_tool_use_id": None,
                **self._ids(),
            }
        )

    def on_message(self, message: Message) -> None:
        if message.role == "user" and not message.tool_results:
            return  # the prompt: the script sent it
        self._message(message, None)

    def on_child_message(self, message: Message, parent_tool_use_id: str) -> None:
        """A sub-agent's message (its prompt too), tagged with the `task` call's id."""
        self._message(message, parent_tool_use_id)

    def _message(self, message: Message, parent_tool_use_id: str | None) -> None:
        body: dict[str, Any] = {"role": message.role, "content": anthropic_blocks(message)}
        if message.role == "assistant":
            body = {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "model": self._model(),
                **body,
            }
        self.write(
            {
                "type": message.role,
                "message": body,
                "parent_tool_use_id": parent_tool_use_id,
                **self._ids(),
            }
        )

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        pass  # the results go out together, as the ``user`` message that carries them

    def _ids(self) -> dict[str, str]:
        return {"session_id": self.session_id, "uuid": str(uuid.uuid4())}
