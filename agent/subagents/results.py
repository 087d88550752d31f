"""The `task` results of children that did not finish: what each did before it stopped.

While the agent runs, `ChildResults` hears every `SubagentFinished` and keeps its result, so
a turn stopped mid-fan-out answers each stopped child's call with its partial work
(`AgentLoop`'s ``settled``). After ``kill -9`` no child said it ended: `settle_unfinished`
reads each unfinished child's transcript (and the checkpoints its calls recorded in the
parent's session) to answer its call the same way on ``--resume``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from agent.engine.outcome import SubagentFinished, TurnResult, TurnStatus
from agent.subagents.child import ChildOutcome, report
from providers import Event, Message, ToolResultBlock
from providers.conversation import is_interrupted_result
from sessions import LoadedSession, SessionError, SessionStore

log = structlog.get_logger("agent.subagents")

CRASHED = "the agent stopped before it finished"


class ChildResults:
    """The `task` results of the children that ended, by call id (a bus subscriber)."""

    def __init__(self) -> None:
        self._results: dict[str, ToolResultBlock] = {}

    def on_event(self, event: Event) -> None:
        if isinstance(event, SubagentFinished) and event.call_result:
            self._results[event.tool_use_id] = ToolResultBlock(
                tool_use_id=event.tool_use_id,
                content=event.call_result,
                is_error=event.call_is_error,
            )

    def result_for(self, call_id: str) -> ToolResultBlock | None:
        return self._results.get(call_id)


def settle_unfinished(store: SessionStore, loaded: LoadedSession) -> list[Message]:
    """``loaded.view`` with each `task` call whose child never said it ended (the agent was
    killed) answered with what that child did, read from its transcript."""
    started = _by_call(loaded.events, "subagent_started")
    unfinished = set(started) - set(_by_call(loaded.events, "subagent_finished"))
    if not unfinished:
        return loaded.view
    settled: dict[str, ToolResultBlock] = {}
    for message in loaded.view:
        for block in message.tool_results:
            if block.tool_use_id in unfinished and is_interrupted_result(block):
                agent_id = started[block.tool_use_id].get("agent_id")
                if isinstance(agent_id, str) and (child := _load(store, agent_id)) is not None:
                    output = report(_outcome(child, loaded.events, Path(loaded.header.cwd)))
                    settled[block.tool_use_id] = ToolResultBlock(
                        tool_use_id=block.tool_use_id, content=output.content, is_error=True
                    )
    if not settled:
        return loaded.view
    return [
        Message(
            role=m.role,
            content=[
                settled.get(b.tool_use_id, b) if isinstance(b, ToolResultBlock) else b
                for b in m.content
            ],
        )
        if m.tool_results
        else m
        for m in loaded.view
    ]


def _by_call(events: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {
        event["tool_use_id"]: event
        for event in events
        if event.get("type") == kind and isinstance(event.get("tool_use_id"), str)
    }


def _load(store: SessionStore, agent_id: str) -> LoadedSession | None:
    try:
        return store.load(agent_id)
    except SessionError as error:  # gone or unreadable: the plain "interrupted" stays
        log.warning("child_transcript_unreadable", agent_id=agent_id, error=str(error))
        return None


def _outcome(child: LoadedSession, events: list[dict[str, Any]], workspace: Path) -> ChildOutcome:
    """A stopped child's outcome from its transcript; the files its calls checkpointed are
    in the parent's events."""
    calls = {call.id for message in child.messages for call in message.tool_uses}
    changed = sorted(
        {
            _relative(event["path"], workspace)
            for event in events
            if event.get("type") == "checkpoint_recorded"
            and event.get("tool_use_id") in calls
            and isinstance(event.get("path"), str)
        }
    )
    steps = sum(message.role == "assistant" for message in child.messages)
    result = TurnResult(TurnStatus.INTERRUPTED, error=CRASHED, steps=steps, usage=child.usage_total)
    return ChildOutcome(result, child.id, child.messages, changed)


def _relative(path: str, workspace: Path) -> str:
    try:
        return str(Path(path).relative_to(workspace))
    except ValueError:
        return path
