"""The editor's face: the engine's stream as ``session/update`` notifications, in order.

`EditorFace` is an `agent.engine.face.Face` like the REPL's and stream-json's; it only builds
updates and hands them to an `Outbox`, whose one task sends them in the order they were made
(the face's methods are synchronous and must return at once; sending is not).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from acp.schema import ToolCallProgress, ToolCallStatus

from agent.acp.updates import (
    Content,
    edit_diff,
    message_chunk,
    notice_chunk,
    plan_update,
    result_content,
    tool_call_start,
    tool_kind,
)
from agent.engine.turn import ContinuationExhausted
from agent.script.stream_json import recovery_fields
from providers import (
    Event,
    Message,
    StreamDelta,
    StreamReset,
    TextDelta,
    ToolResultBlock,
    ToolUseBlock,
)
from recovery import GaveUp
from tools import ToolStarted
from tools.todos import TodosChanged

log = structlog.get_logger("agent.acp.face")

Update = Any
"""One ``session/update`` value (an `acp.schema` update model)."""


class Outbox:
    """One session's updates, sent in order by one task once `open` is called.

    Until then they wait: the editor learns a new session's id from the response to
    ``session/new``, so nothing about it may be sent before.
    """

    def __init__(self, send: Callable[[Update], Awaitable[None]]) -> None:
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None

    def put(self, update: Update) -> None:
        """Queue ``update``; safe from any thread (events may come from a worker)."""
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(update)
        else:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, update)

    def open(self) -> None:
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name="acp-outbox")

    async def drain(self) -> None:
        """Wait until everything queued so far is sent (before a response or a question)."""
        self.open()
        await self._queue.join()

    def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()

    async def _run(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._send(update)
            except Exception as error:  # the client went away: drop, and let drain() return
                log.info("update_not_sent", error=repr(error))
            finally:
                self._queue.task_done()


class EditorFace:
    """Turns the engine's stream into updates for one editor session.

    Args:
        outbox: Where the updates go.
        workspace: The session's directory (paths the editor gets are absolute).
        usage: The ``usage_update`` to send after each answer, or None.
    """

    def __init__(self, outbox: Outbox, workspace: Path, usage: Callable[[], Update | None]) -> None:
        self.outbox = outbox
        self.workspace = workspace
        self._usage = usage
        self._pending: dict[str, ToolUseBlock] = {}
        """Calls the model made that have no result yet, in the order they run."""
        self._diffs: dict[str, list[Content]] = {}
        """Each pending edit's diff, read before it runs (after, the old side is gone)."""
        self._streamed = False
        self.truncated = False
        """This turn's answer was still cut off after every continuation (max_tokens)."""
        self.retry_after: float | None = None
        """Seconds the server asked to wait, when the last request gave up on it."""

    def begin_turn(self) -> None:
        self.truncated = False
        self.retry_after = None
        self._streamed = False

    def notice(self, text: str, fields: dict[str, Any] | None = None) -> None:
        """Show ``text`` to the editor's user, apart from the answer."""
        self.outbox.put(notice_chunk(text, fields))

    def _started(self, call_id: str) -> ToolUseBlock | None:
        """The pending call ``call_id`` names: the parent's, else a sub-agent's."""
        if (call := self._pending.get(call_id)) is not None:
            return call
        tail = f"/{call_id}"
        return next((c for key, c in self._pending.items() if key.endswith(tail)), None)

    def running_call(self, tool: str) -> ToolUseBlock | None:
        """The call of ``tool`` now running (calls run one at a time, in order)."""
        return next((call for call in self._pending.values() if call.name == tool), None)

    def call_update(
        self, call: ToolUseBlock, status: ToolCallStatus, content: list[Content] | None
    ) -> None:
        self.outbox.put(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call.id,
                status=status,
                kind=tool_kind(call.name),
                content=content,
            )
        )

    # The Face protocol.

    def on_event(self, event: Event) -> None:
        if isinstance(event, ContinuationExhausted):
            self.truncated = True
            self.notice(event.describe(), {"subtype": "continuation_exhausted"})
            return
        if isinstance(event, TodosChanged):
            self.outbox.put(plan_update(event.todos))
            return
        if isinstance(event, ToolStarted):  # past every check and question: running now
            if (call := self._started(event.tool_use_id)) is not None:
                self.call_update(call, "in_progress", None)
            return
        if isinstance(event, GaveUp):
            self.retry_after = event.retry_after
        fields = recovery_fields(event)
        if fields is not None:
            self.notice(event.describe(), fields)

    def on_delta(self, delta: StreamDelta) -> None:
        if isinstance(delta, TextDelta) and delta.text:
            self._streamed = True
            self.outbox.put(message_chunk(delta.text))
        elif isinstance(delta, StreamReset) and self._streamed:
            # Sent text cannot be taken back: say that what follows replaces it.
            self._streamed = False
            self.notice(f"The answer restarts ({delta.reason}).", {"subtype": "stream_reset"})

    def on_message(self, message: Message) -> None:
        if message.role == "assistant":
            if not self._streamed and (text := message.text):
                self.outbox.put(message_chunk(text))
            self._streamed = False
            for call in message.tool_uses:
                self._pending[call.id] = call
                self._diffs[call.id] = diff = edit_diff(call, self.workspace)
                self.outbox.put(tool_call_start(call, self.workspace, diff))
            if (usage := self._usage()) is not None:
                self.outbox.put(usage)
            return
        for result in message.tool_results:  # closed without running: an interruption
            closed = self._pending.pop(result.tool_use_id, None)
            self._diffs.pop(result.tool_use_id, None)
            if closed is not None:
                self.call_update(closed, "failed", result_content(result))

    def on_child_message(self, message: Message, parent_tool_use_id: str) -> None:
        """A sub-agent's calls are tool calls for the editor too: their ids are under the
        `task` call's (``TASK_ID/CALL_ID``), and ``_meta.agent.parentToolUseId`` names it."""
        meta = {"agent": {"parentToolUseId": parent_tool_use_id}}
        if message.role == "assistant":
            for call in message.tool_uses:
                shown = call.model_copy(update={"id": f"{parent_tool_use_id}/{call.id}"})
                self._pending[shown.id] = shown
                self._diffs[shown.id] = diff = edit_diff(shown, self.workspace)
                start = tool_call_start(shown, self.workspace, diff)
                self.outbox.put(start.model_copy(update={"field_meta": meta}))
            return
        for result in message.tool_results:
            key = f"{parent_tool_use_id}/{result.tool_use_id}"
            if (pending := self._pending.pop(key, None)) is not None:
                self.on_tool_result(pending, result)

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        self._pending.pop(call.id, None)
        diff = self._diffs.pop(call.id, [])
        status: ToolCallStatus = "failed" if result.is_error else "completed"
        self.call_update(
            call, status, (diff if not result.is_error else []) + result_content(result)
        )

    def diff_of(self, call: ToolUseBlock) -> list[Content]:
        """The diff shown for ``call`` when it was made."""
        return self._diffs.get(call.id, [])
