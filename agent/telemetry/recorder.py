"""One session's metrics and events: a subscriber of its event bus, face and usage ledger.

What leaves: counts, durations, model names, tool names, status codes. Never an API key;
a prompt's text only with ``AGENT_LOG_USER_PROMPTS=1`` and a tool's input only with
``AGENT_LOG_TOOL_DETAILS=1``, both redacted as session files are.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec

import structlog
from opentelemetry._logs import SeverityNumber

from agent.engine.child_requests import asking
from agent.engine.outcome import ChildsRecovery, SideModelSwitch
from agent.telemetry.export import Exporters
from compaction.events import CompactionApplied, CompactionFailed
from providers import (
    Event,
    Message,
    StreamDelta,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from providers.profiles import cost_of
from recovery import FallbackActivated, GaveUp, ModelRestored, RetryScheduled
from recovery.failures import FailedRequest
from recovery.usage import AnsweredRequest
from tools import ToolRefused, ToolStarted

__all__ = ["Recorder"]

log = structlog.get_logger("agent.telemetry")
P = ParamSpec("P")


def _never_raises(method: Callable[P, None]) -> Callable[P, None]:
    """Telemetry is called in the middle of a request or a turn: a fault in it is logged,
    never passed on."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except Exception:
            log.warning("telemetry_record_failed", method=method.__name__, exc_info=True)

    return guarded


_TOKEN_TYPES = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_tokens"),
    ("cacheCreation", "cache_write_tokens"),
)
_DETAIL_CHARS = 2000
"""The most of a prompt or a tool's input an event carries."""


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _named(ref: str, key: str = "model") -> dict[str, Any]:
    """A model as telemetry names it everywhere, as Claude Code does: its bare id under
    ``key`` (``claude-sonnet-4-5``), and the chain's provider beside it (``provider``, or
    ``from_provider`` for ``key="from"``), so one model is one series whoever asked."""
    provider, sep, name = ref.partition(":")
    if not sep:
        return {key: ref}
    return {key: name, "provider" if key == "model" else f"{key}_provider": provider}


def _lines(text: str) -> int:
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


class Recorder:
    """Turns what one session does into the metrics and events of docs/telemetry.md."""

    def __init__(
        self,
        exporters: Exporters,
        *,
        session_id: str,
        model: Callable[[], str],
        environ: Mapping[str, str],
        redact: Callable[[str], str],
    ) -> None:
        self._logger = exporters.logger
        self._session = session_id
        self._model = model
        self._redact = redact
        self._prompts = _flag(environ, "AGENT_LOG_USER_PROMPTS")
        self._details = _flag(environ, "AGENT_LOG_TOOL_DETAILS")
        meter = exporters.meter
        self._sessions = meter.create_counter("agent.session.count", unit="{session}")
        self._tokens = meter.create_counter("agent.token.usage", unit="tokens")
        self._cost = meter.create_counter("agent.cost.usage", unit="USD")
        self._retries = meter.create_counter("agent.retry.count", unit="{retry}")
        self._fallbacks = meter.create_counter("agent.fallback.count", unit="{fallback}")
        self._code = meter.create_counter("agent.lines_of_code.count", unit="{line}")
        self._tool_time = meter.create_histogram("agent.tool.duration", unit="ms")
        self._tools_started: dict[str, float] = {}

    @_never_raises
    def started(self) -> None:
        """Count this session."""
        self._sessions.add(1, self._attrs(**_named(self._model())))

    # The event bus.

    @_never_raises
    def on_event(self, event: Event) -> None:
        """Record what recovery, compaction and the tools did."""
        if isinstance(event, ChildsRecovery):  # a sub-agent's: counted, named by its kind
            self._recovered(event.inner, agent_type=event.agent_type, agent_id=event.agent_id)
        elif isinstance(event, RetryScheduled | GaveUp | FallbackActivated | ModelRestored):
            self._recovered(event)
        elif isinstance(event, SideModelSwitch):  # small_model's, for side requests
            self._switched(event.switch)
        elif isinstance(event, CompactionApplied):
            self._emit(
                "agent.compaction",
                stage=event.stage.value,
                reason=event.reason.value,
                success=True,
                tokens_before=event.tokens_before,
                tokens_after=event.tokens_after,
            )
        elif isinstance(event, CompactionFailed):
            self._emit(
                "agent.compaction",
                stage=event.stage.value if event.stage is not None else "",
                reason=event.reason.value,
                success=False,
            )
        elif isinstance(event, ToolStarted):
            self._tools_started[event.tool_use_id] = time.monotonic()
            self._emit("agent.tool_decision", tool=event.tool, decision="accept")
        elif isinstance(event, ToolRefused):
            self._emit("agent.tool_decision", tool=event.tool, decision="reject", source=event.by)

    def _recovered(
        self, event: Event, agent_type: str | None = None, agent_id: str | None = None
    ) -> None:
        """Count a retry, a fallback; tell of a give-up. A sub-agent's names its kind (metric
        and event) and the child (event only: one series per kind, not per child); a retry
        and a give-up name what their request was for (``purpose``: a handful of values)."""
        if isinstance(event, RetryScheduled):
            why = {"reason": event.kind.value, "agent_type": agent_type}
            self._retries.add(
                1, self._attrs(**_named(event.model), **why, purpose=event.purpose.value)
            )
        elif isinstance(event, FallbackActivated | ModelRestored):
            self._switched(event, agent_type, agent_id)
        elif isinstance(event, GaveUp):
            self._emit(
                "agent.api_retries_exhausted",
                **_named(event.model or self._model()),
                purpose=event.purpose.value,
                error_kind=event.kind.value,
                requests=event.requests,
                waited_s=round(event.waited, 3),
                retry_after=event.retry_after,
                agent_type=agent_type,
                agent_id=agent_id,
                severity=SeverityNumber.ERROR,
            )

    def _switched(
        self,
        event: FallbackActivated | ModelRestored,
        agent_type: str | None = None,
        agent_id: str | None = None,
    ) -> None:
        """Count a fallback and tell of it, or of the return. A sub-agent's names its kind
        (metric and event) and the child (event only: one series per kind, not per child)."""
        if isinstance(event, FallbackActivated):
            moved: dict[str, Any] = {
                **_named(event.from_model, "from"),
                **_named(event.to_model, "to"),
                "purpose": event.purpose.value,
                "agent_type": agent_type,
            }
            self._fallbacks.add(1, self._attrs(**moved))
            self._emit(
                "agent.fallback",
                **moved,
                agent_id=agent_id,
                reason=self._redact(event.reason),
                state="activated",
                sticky=event.stays_because is not None,
                returns_in_s=event.returns_in,
            )
        else:
            back: dict[str, Any] = {
                **_named(event.from_model, "from"),
                **_named(event.model, "to"),
                "purpose": event.purpose.value,
                "agent_type": agent_type,
            }
            self._emit(
                "agent.fallback",
                **back,
                agent_id=agent_id,
                reason="primary restored",
                state="restored",
                fallback_s=round(event.after, 3),
            )

    # Recovery's failed requests.

    @_never_raises
    def on_failure(self, failed: FailedRequest) -> None:
        """Tell of a request a model did not answer, whether it is retried, moved on from
        (to the next model) or ends the call; a sub-agent's names it (told while its request
        is under way, in its task)."""
        error = failed.error
        child = asking()
        self._emit(
            "agent.api_error",
            **({"provider": error.provider} | _named(failed.model)),
            status_code=error.status,
            error_kind=error.kind.value,
            attempt=failed.attempt,
            retry_after=round(failed.wait, 3) if failed.wait is not None else None,
            request_id=error.request_id,
            next=failed.next,
            purpose=failed.purpose.value,
            agent_type=child.agent_type if child is not None else None,
            agent_id=child.agent_id if child is not None else None,
            severity=SeverityNumber.WARN if failed.next == "retry" else SeverityNumber.ERROR,
        )

    # The usage ledger.

    @_never_raises
    def on_answer(self, answered: AnsweredRequest) -> None:
        """Count one answer's tokens and cost, and tell of the request; a sub-agent's names
        it (event only: the token and cost series stay one per model)."""
        usage, seconds = answered.usage, answered.seconds
        cost = cost_of({answered.model: usage})  # priced by the vendor's name for the model
        model = _named(answered.sent_to or answered.model)  # as the request was sent
        child = asking()
        attrs = self._attrs(**model)
        for label, field in _TOKEN_TYPES:
            if count := getattr(usage, field):
                self._tokens.add(count, {**attrs, "type": label})
        if cost is not None:
            self._cost.add(cost, attrs)
        self._emit(
            "agent.api_request",
            **model,
            purpose=answered.kind.value,
            attempt=answered.attempt,
            duration_ms=round(seconds * 1000) if seconds is not None else None,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_creation_tokens=usage.cache_write_tokens,
            cost_usd=cost,
            agent_type=child.agent_type if child is not None else None,
            agent_id=child.agent_id if child is not None else None,
        )

    # The face: prompts and tool results.

    def on_delta(self, delta: StreamDelta) -> None:
        """Nothing: an answer's text never leaves."""

    @_never_raises
    def on_message(self, message: Message) -> None:
        """Tell of the person's prompt: its length, its text only if asked for."""
        if message.role != "user" or any(
            not isinstance(block, TextBlock) for block in message.content
        ):
            return
        text = "".join(block.text for block in message.content if isinstance(block, TextBlock))
        shown = self._redact(text)[:_DETAIL_CHARS] if self._prompts else None
        self._emit("agent.user_prompt", prompt_length=len(text), prompt=shown)

    @_never_raises
    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """Tell of a finished tool call: its time, whether it worked, lines it changed."""
        began = self._tools_started.pop(call.id, None)
        millis = (time.monotonic() - began) * 1000 if began is not None else None
        success = not result.is_error
        if millis is not None:
            self._tool_time.record(millis, self._attrs(tool=call.name, success=success))
        if success:
            self._count_lines(call)
        details = None
        if self._details:
            details = self._redact(json.dumps(call.input, ensure_ascii=False))[:_DETAIL_CHARS]
        self._emit(
            "agent.tool_result",
            tool=call.name,
            success=success,
            duration_ms=round(millis) if millis is not None else None,
            decision="accept" if began is not None else "reject",
            tool_input=details,
        )

    def _count_lines(self, call: ToolUseBlock) -> None:
        added = removed = 0
        if call.name == "edit_file":
            old, new = call.input.get("old_string"), call.input.get("new_string")
            if isinstance(old, str) and isinstance(new, str):
                removed, added = _lines(old), _lines(new)
        elif call.name == "write_file" and isinstance(content := call.input.get("content"), str):
            added = _lines(content)
        for label, count in (("added", added), ("removed", removed)):
            if count:
                self._code.add(count, self._attrs(**_named(self._model()), type=label))

    # Shared.

    def _attrs(self, **more: Any) -> dict[str, Any]:
        return {"session.id": self._session, **{k: v for k, v in more.items() if v is not None}}

    def _emit(
        self, name: str, *, severity: SeverityNumber = SeverityNumber.INFO, **fields: Any
    ) -> None:
        attributes = self._attrs(**{"event.name": name}, **fields)
        self._logger.emit(
            timestamp=time.time_ns(),
            event_name=name,
            body=name,
            severity_number=severity,
            severity_text=severity.name,
            attributes=attributes,
        )
