"""Building an engine, the loop with its tool executor, as a plain function of its parts.

The parent agent and each of its sub-agents come from `build_engine`. `agent.app` builds an
agent's `EngineParts` once; its own engine and each child's are those parts with a few
replaced (`dataclasses.replace`): the tools, the system prompt, the provider, the limits, the
face. Conversation state (the transcript, the history, turn-level recovery) is not a part:
it is given to `build_engine` for the one engine it belongs to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.engine.face import Face
from agent.engine.instructions import NearestInstructions
from agent.engine.loop import AgentLoop
from agent.engine.ports import ToolRunner, Transcript, TurnRecovery
from agent.engine.tool_ids import ToolCallIds
from providers import (
    EventSink,
    Message,
    Provider,
    RequestKind,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from sessions import SessionWriter
from sessions.records import SeenFile
from tools import Approver, ToolExecutor
from tools.attempts import ToolRunner as RunOneTool
from tools.attempts import run_tool
from tools.base import FileSeen, Tool
from tools.guard.sandbox import Sandbox
from tools.hooks import ApprovalMode, BeforeToolHook
from tools.settings import ToolSettings


@dataclass(frozen=True)
class EngineParts:
    """What one engine is built from.

    Args:
        workspace: Where the tools work.
        home: The person's home directory (the safety policy's).
        provider: What the model calls go through (the recovering provider).
        system: The system prompt.
        tools: The engine's own tools.
        more_tools: Tools that come and go (MCP servers', skills), asked for per request.
        settings: The tool settings of the current model.
        approval: The approval mode now.
        approver: Asks the person (None: nobody to ask, such calls are refused).
        hooks: The ``before_tool`` checks (hooks, permission rules), in order.
        sandbox: Where commands run.
        redact: Hides secrets in results.
        read_denied: Whether a rule withholds reading a path.
        checkpoints: Where undo checkpoints are kept.
        outputs: Where whole command outputs are kept.
        events: Hears every event.
        face: Shows the engine's work (`agent.engine.face.Face`).
        max_steps: Model calls per turn, or what gives them at the start of a turn.
        max_tokens: Output tokens to ask for per call (None: the provider's choice).
        turn_timeout: Wall-clock seconds a turn may run (None: no limit).
        runner: Runs one validated tool call (chaos mode's injects faults).
        kind: What the model calls are for (a sub-agent's are counted apart).
    """

    workspace: Path
    home: Path
    provider: Provider
    system: str
    tools: Sequence[Tool[Any]]
    more_tools: Callable[[], Sequence[Tool[Any]]]
    settings: Callable[[], ToolSettings]
    approval: Callable[[], ApprovalMode]
    approver: Approver | None
    hooks: Sequence[BeforeToolHook]
    sandbox: Sandbox
    redact: Callable[[str], str]
    read_denied: Callable[[Path], bool]
    checkpoints: Path
    outputs: Path
    events: EventSink
    face: Face | None
    max_steps: int | Callable[[], int]
    max_tokens: int | None
    turn_timeout: float | None = None
    runner: RunOneTool = run_tool
    kind: RequestKind = RequestKind.TURN


@dataclass(frozen=True)
class Engine:
    """A built engine: the loop, and the executor its tool calls run through."""

    loop: AgentLoop
    executor: ToolExecutor


def build_engine(
    parts: EngineParts,
    *,
    transcript: Transcript | None = None,
    history: Sequence[Message] = (),
    recovery: TurnRecovery | None = None,
    instructions: NearestInstructions | None = None,
    tool_ids: ToolCallIds | None = None,
    tool_news: Callable[[Sequence[ToolSpec]], str | None] | None = None,
    together: Callable[[ToolUseBlock], bool] = lambda call: False,
    settled: Callable[[str], ToolResultBlock | None] = lambda call_id: None,
    turns_before: int = 0,
    calls_through: Callable[[ToolExecutor], ToolRunner] | None = None,
    files_seen: Callable[[str, FileSeen], None] | None = None,
) -> Engine:
    """The engine of ``parts``, for one conversation (see `AgentLoop` for the rest).

    ``files_seen``: told of each file a tool call read whole (`seen_by` the session).

    ``turns_before``: turns the conversation had before (undo numbers on from them).
    ``calls_through``: what the loop runs calls through around the executor (a sub-agent's
    refuses `task`); default the executor itself.

    Raises:
        OSError: the checkpoint directory cannot be made.
    """
    executor = ToolExecutor(
        workspace=parts.workspace,
        settings=parts.settings,
        approval=parts.approval,
        approver=parts.approver,
        events=parts.events,
        checkpoint_dir=parts.checkpoints,
        home=parts.home,
        tools=parts.tools,
        sandbox=parts.sandbox,
        redact=parts.redact,
        more_tools=parts.more_tools,
        hooks=parts.hooks,
        runner=parts.runner,
        read_denied=parts.read_denied,
        outputs=parts.outputs,
        turns_before=turns_before,
        on_file_seen=files_seen,
    )
    loop = AgentLoop(
        provider=parts.provider,
        tools=calls_through(executor) if calls_through is not None else executor,
        system=parts.system,
        history=history,
        transcript=transcript,
        events=parts.events,
        face=parts.face,
        instructions=instructions,
        recovery=recovery,
        max_steps=parts.max_steps,
        turn_timeout=parts.turn_timeout,
        max_tokens=parts.max_tokens,
        tool_ids=tool_ids,
        tool_news=tool_news,
        together=together,
        kind=parts.kind,
        settled=settled,
    )
    return Engine(loop, executor)


def seen_by(session: SessionWriter) -> Callable[[str, FileSeen], None]:
    """Hands each file a tool call read whole to ``session``, which saves it with the call's
    result as the file's state: what the model saw, without reading the file again."""

    def note(tool_use_id: str, seen: FileSeen) -> None:
        try:
            state = SeenFile(
                path=str(seen.path),
                exists=True,
                size=seen.size,
                mtime_ns=seen.mtime_ns,
                sha256=seen.sha256,
            )
        except ValueError:  # a path the session cannot keep: it looks at the file itself
            return
        session.note_seen(tool_use_id, state)

    return note
