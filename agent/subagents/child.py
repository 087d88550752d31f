"""One child: built from its parent's parts, run for one job, its outcome as a value.

The child's conversation is kept as a session of its own, whose header names the parent
session and the `task` call (`sessions.records.Header`); listings leave such sessions out.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent.engine.build import EngineParts, build_engine, seen_by
from agent.engine.child_requests import asking_for
from agent.engine.face import ChildMessages, Face
from agent.engine.loop import INTERRUPTED_REASON
from agent.engine.outcome import (
    ChildId,
    SubagentFinished,
    SubagentProgress,
    SubagentStarted,
    TurnEnded,
    TurnResult,
    TurnStatus,
)
from agent.subagents.kinds import SubagentType
from agent.subagents.undo import ChildEdits
from providers import (
    Event,
    EventSink,
    Message,
    Provider,
    RequestKind,
    StreamDelta,
    ToolResultBlock,
    ToolUseBlock,
)
from providers.conversation import interrupted_text
from sessions import SessionError, SessionStore
from tools import Approver, ToolExecutor
from tools.attempts import run_tool
from tools.base import Tool, ToolOutput
from tools.hooks import ApprovalMode, ApprovalRequest

LAST_STEPS = 5
"""How many of a failed child's last calls its result lists."""


@dataclass(frozen=True)
class ChildParts:
    """What every child of one agent is built from: its parent's parts.

    Args:
        parent: The parts the parent's engine is built from; a child's engine is built from
            them by the same `agent.engine.build.build_engine`, with its own tools, system
            prompt, provider, limits, approver, checkpoints and face. It shares the
            recovering provider (one recovery state for parent and children), the
            before-tool checks, the sandbox, the redactor and the event bus (a child's turn
            end stays with the child).
        tools: Fresh instances of the parent's own tools (`task` left out).
        more_tools: Tools that come and go (MCP servers'), as the parent's executor asks.
        system: The parent's system prompt, which a child's starts with.
        after_tool: Hears each of a child's tool results (the PostToolUse hooks).
        store: Where transcripts are kept; ``parent_id`` the parent's session.
        model_chain: The models configured, for the transcript's header.
        checkpoints: Under it, each child keeps its undo checkpoints.
        max_turns: Model calls a child may make unless its kind says otherwise.
        model_for: The provider of a kind that names a model (`agent.setup.child_models`),
            given the name and the child that asks; None: every child uses the parent's
            provider.
        approval_for: The approval mode of a kind, given the parent's
            (`agent.subagents.catalog.AgentCatalog.approval`); None: the parent's.
        edits: Where each child's executor is registered, so the parent's ``/undo`` puts
            back what its children changed in the turn.
    """

    parent: EngineParts
    tools: Callable[[], Sequence[Tool[Any]]]
    more_tools: Callable[[], Sequence[Tool[Any]]]
    system: str
    after_tool: Callable[[ToolUseBlock, ToolResultBlock], None] | None
    store: SessionStore
    parent_id: str
    model_chain: list[str]
    checkpoints: Path
    max_turns: int
    model_for: Callable[[str | None, ChildId], Provider] | None = None
    approval_for: (
        Callable[[SubagentType, Callable[[], ApprovalMode]], Callable[[], ApprovalMode]] | None
    ) = None
    edits: ChildEdits | None = None

    def provider_of(self, kind: SubagentType, child: ChildId) -> Provider:
        """What ``child``, of ``kind``, sends through."""
        if self.model_for is None or kind.model is None:
            return self.parent.provider
        return self.model_for(kind.model, child)

    def approval_of(self, kind: SubagentType) -> Callable[[], ApprovalMode]:
        """What gives a child of ``kind`` its approval mode."""
        if self.approval_for is None:
            return self.parent.approval
        return self.approval_for(kind, self.parent.approval)


@dataclass(frozen=True)
class ChildOutcome:
    """How a child's job ended: its turn's result and what it did."""

    result: TurnResult
    transcript: str
    """The child's session id ("" when it could not be stored)."""
    messages: list[Message]
    changed: list[str]
    """Workspace paths it changed (checkpointed before changing them)."""

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        return [call for message in self.messages for call in message.tool_uses]


class ChildApprover:
    """Asks the person for a child, naming it; children running at once ask one at a time."""

    def __init__(self, approver: Approver, turn: asyncio.Lock, child: str) -> None:
        self.approver = approver
        self.turn = turn
        self.child = child

    async def approve(self, request: ApprovalRequest) -> bool:
        named = replace(request, summary=f"[{self.child}] {request.summary}")
        async with self.turn:
            return await self.approver.approve(named)


class NoNesting:
    """A child's tool runner: its executor, except that a `task` call is refused."""

    def __init__(self, executor: ToolExecutor, refused: frozenset[str]) -> None:
        self.executor = executor
        self.refused = refused

    def specs(self) -> list[Any]:
        return [spec for spec in self.executor.specs() if spec.name not in self.refused]

    async def execute(self, call: ToolUseBlock) -> ToolResultBlock:
        if call.name in self.refused:
            return ToolResultBlock(
                tool_use_id=call.id,
                content="Refused: a sub-agent cannot start another sub-agent. "
                "Do this part of the job yourself with the tools you have.",
                is_error=True,
            )
        return await self.executor.execute(call)

    def begin_turn(self) -> None:
        self.executor.begin_turn()

    @property
    def repeated_call_stop(self) -> str | None:
        return self.executor.repeated_call_stop


class ChildFace:
    """Shows a child's messages as the child's (tagged with the `task` call's id); its
    streamed text and its turn's end stay with it."""

    def __init__(
        self,
        parent: Face | None,
        parent_tool_use_id: str,
        after_tool: Callable[[ToolUseBlock, ToolResultBlock], None] | None = None,
    ) -> None:
        self.parent = parent
        self.parent_tool_use_id = parent_tool_use_id
        self.after_tool = after_tool
        self.progress: Callable[[str], None] = lambda tool: None
        """Told what the child does now: the calls it runs ("" while it thinks)."""

    def on_event(self, event: Event) -> None:
        pass  # events go to the parent's bus directly

    def on_delta(self, delta: StreamDelta) -> None:
        pass

    def on_message(self, message: Message) -> None:
        if isinstance(self.parent, ChildMessages):
            self.parent.on_child_message(message, self.parent_tool_use_id)
        if message.role == "assistant":
            self.progress(", ".join(f"{c.name} {_brief(c)}".strip() for c in message.tool_uses))
        elif message.tool_results:
            self.progress("")

    def on_tool_result(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        if self.after_tool is not None:
            self.after_tool(call, result)


async def run_child(
    parts: ChildParts,
    kind: SubagentType,
    prompt: str,
    call_id: str,
    refused: frozenset[str],
    description: str = "",
    asking: asyncio.Lock | None = None,
    parent_turn: int = 0,
) -> ChildOutcome:
    """Run one child on ``prompt`` to its end; only cancellation raises.

    ``refused``: the names of the `task` tool, which a child may not call. Its start and
    end are events on the parent's bus (`SubagentStarted`, `SubagentFinished`), and so is
    what recovery does for its requests, named as the child's
    (`agent.engine.child_requests`). ``asking``:
    held while a child asks the person, so children running at once ask one at a time.
    ``parent_turn``: the parent's turn the call runs in (its ``/undo`` takes the child's
    edits back too).
    """
    try:
        writer = parts.store.create(
            cwd=parts.parent.workspace,
            model_chain=parts.model_chain,
            parent=parts.parent_id,
            parent_tool_use_id=call_id,
        )
    except SessionError as error:
        failed = TurnResult(status=TurnStatus.FAILED, error=f"its transcript: {error}")
        return ChildOutcome(failed, "", [], [])
    parent = parts.parent
    face = ChildFace(parent.face, call_id, parts.after_tool)
    child = ChildId(writer.id, kind.name, call_id)
    engine = build_engine(
        replace(
            parent,
            provider=parts.provider_of(kind, child),
            system=f"{parts.system}\n\n{kind.prompt}",
            tools=kind.offered([t for t in parts.tools() if t.name not in refused]),
            more_tools=lambda: [tool for tool in parts.more_tools() if kind.allows(tool.name)],
            approval=parts.approval_of(kind),
            approver=(
                ChildApprover(parent.approver, asking or asyncio.Lock(), _named(kind, description))
                if parent.approver is not None
                else None
            ),
            hooks=[*parent.hooks, *kind.checks()],
            checkpoints=parts.checkpoints / writer.id,
            events=_without_turn_ends(parent.events),
            face=face,
            max_steps=kind.max_turns or parts.max_turns,
            turn_timeout=None,
            runner=run_tool,
            kind=RequestKind.SUBAGENT,
        ),
        transcript=writer,
        calls_through=lambda executor: NoNesting(executor, refused),
        files_seen=seen_by(writer),
    )
    loop, executor = engine.loop, engine.executor
    if parts.edits is not None:
        parts.edits.add(executor, parent_turn)
    started = time.monotonic()
    who = {"agent_id": writer.id, "agent_type": kind.name, "description": description}
    parent.events(SubagentStarted(**who, tool_use_id=call_id))
    face.progress = lambda tool: parent.events(
        SubagentProgress(
            agent_id=writer.id,
            tool_use_id=call_id,
            tool=tool,
            tokens=loop.usage.input_tokens + loop.usage.output_tokens,
        )
    )
    result = TurnResult(status=TurnStatus.INTERRUPTED)
    try:
        with asking_for(child):  # recovery tells of this child's requests as its own
            result = await loop.run_turn(prompt)
    finally:
        if result.status is TurnStatus.INTERRUPTED:  # how far it got
            steps = sum(message.role == "assistant" for message in loop.messages)
            result = TurnResult(status=TurnStatus.INTERRUPTED, steps=steps, usage=loop.usage)
        changed = sorted({c.rel for c in executor.checkpoints})
        writer.close()
        outcome = ChildOutcome(result, writer.id, list(loop.messages), changed)
        output = report(outcome)
        usage = loop.usage
        parent.events(
            SubagentFinished(
                **who,
                tool_use_id=call_id,
                status=result.status,
                steps=result.steps,
                tool_calls=len(outcome.tool_calls),
                tokens=usage.input_tokens + usage.output_tokens,
                seconds=time.monotonic() - started,
                transcript_path=str(writer.path),
                error=result.error,
                call_result=output.content,
                call_is_error=output.is_error,
            )
        )
    return outcome


def report(outcome: ChildOutcome) -> ToolOutput:
    """The call's result: the child's answer and a footer, or why it stopped and what it
    did (an interrupted child's says so, to run it again)."""
    result = outcome.result
    calls = outcome.tool_calls
    usage = result.usage
    tokens = usage.input_tokens + usage.output_tokens
    footer = (
        f"[sub-agent: {result.steps} turn{'s' if result.steps != 1 else ''}, "
        f"{len(calls)} tool call{'s' if len(calls) != 1 else ''}, {tokens} tokens, "
        f"transcript {outcome.transcript or 'not saved'}]"
    )
    if result.status is TurnStatus.DONE:
        return ToolOutput(content=f"{result.answer.strip() or '(no answer)'}\n\n{footer}")
    if result.status is TurnStatus.INTERRUPTED:
        lines = [
            f"The sub-agent was interrupted ({result.error or INTERRUPTED_REASON}) before it "
            "finished; run it again if its job is still needed."
        ]
    else:
        lines = [f"The sub-agent failed: {result.error or result.status.value}"]
    if outcome.changed:
        lines.append(f"Files it changed: {', '.join(outcome.changed)}")
    if calls:
        lines.append("Its last steps:")
        lines += [f"- {call.name} {_brief(call)}".rstrip() for call in calls[-LAST_STEPS:]]
    if result.answer.strip():
        lines.append(f"Its last words: {result.answer.strip()[:500]}")
    lines.append(footer)
    if result.status is TurnStatus.INTERRUPTED:
        lines.append(f"Its last step: {interrupted_text('the step', 'it was stopped')}")
    return ToolOutput(content="\n".join(lines), is_error=True)


def _named(kind: SubagentType, description: str) -> str:
    """The child as its approval questions name it: its kind and its job."""
    job = " ".join(description.split())[:60]
    return f"sub-agent {kind.name}: {job}" if job else f"sub-agent {kind.name}"


def _brief(call: ToolUseBlock) -> str:
    for key in ("path", "command", "pattern", "description"):
        value = call.input.get(key)
        if isinstance(value, str):
            return value.splitlines()[0][:100] if value.strip() else ""
    return ""


def _without_turn_ends(events: EventSink) -> EventSink:
    """The parent's bus, without the child's turn end (the parent's turn goes on)."""

    def emit(event: Event) -> None:
        if not isinstance(event, TurnEnded):
            events(event)

    return emit
