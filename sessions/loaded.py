"""A session read back: the conversation to continue, and the state around it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from providers.messages import Message, TextBlock, ToolResultBlock, Usage
from sessions.files import DEFAULT_HASH_LIMIT, FileChange, changed_files, changed_files_note
from sessions.records import (
    CheckpointRecord,
    Header,
    ModelSwitchRecord,
    SeenFile,
    TurnEndRecord,
)
from sessions.repair import repair_history
from sessions.scan import ScannedFile

SHELL_INPUT = "<bash-input>"


def shell_run(command: str, output: str) -> Message:
    """A ``!command`` the person ran, and its output, as Claude Code keeps it: a user message
    the model reads with the next prompt."""
    return Message.user(f"{SHELL_INPUT}{command}</bash-input>\n<bash-stdout>{output}</bash-stdout>")


def is_shell_run(message: Message) -> bool:
    """Whether ``message`` holds only ``!command`` runs (`shell_run`): context for the next
    prompt, not a request the model must answer."""
    blocks = message.content
    return (
        message.role == "user"
        and bool(blocks)
        and all(isinstance(b, TextBlock) and b.text.startswith(SHELL_INPUT) for b in blocks)
    )


def is_typed_prompt(message: Message) -> bool:
    """Whether ``message`` could be a prompt the person typed: user text, no tool results."""
    return message.role == "user" and bool(message.text) and not message.tool_results


@dataclass
class ModelState:
    """Which model the session uses and whether a fallback sticks for the rest of it."""

    chain: list[str]
    current: str
    sticky_fallback: bool = False


@dataclass
class LoadedSession:
    """Everything needed to continue a session.

    ``view`` is what to send the model next: the last compaction's messages plus every message
    after it, repaired so both providers accept it. ``messages`` is the full, unrepaired
    history. When ``ends_with_user_message`` is true the resumed turn should answer it
    before asking the person for anything. Show ``warnings`` and ``changed_files`` to the
    person, and give `changed_files_note` to the model with the next request.
    """

    id: str
    path: Path
    header: Header
    messages: list[Message]
    view: list[Message]
    events: list[dict[str, Any]]
    model_state: ModelState
    usage_total: Usage
    usage_by_model: dict[str, Usage]
    checkpoints: list[CheckpointRecord]
    turn_ends: list[TurnEndRecord]
    warnings: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    usage_by_kind: dict[str, Usage] = field(default_factory=dict)
    """Tokens per purpose of the request (turn, compaction, ...)."""
    changed_files: list[FileChange] = field(default_factory=list)
    unsaved_tail: Message | None = None
    """A message the repair added after the last saved one; `SessionStore.open` saves it."""

    @property
    def ends_with_user_message(self) -> bool:
        """Whether the view ends on a user message, which the resumed turn must answer (not
        on ``!command`` runs alone, which wait for the next prompt)."""
        return bool(self.view) and self.view[-1].role == "user" and not is_shell_run(self.view[-1])

    @property
    def changed_files_note(self) -> str | None:
        """Text telling the model which files changed on disk; None if none did."""
        return changed_files_note(self.changed_files)

    def last_exchange(self, typed: Callable[[Message], bool] = is_typed_prompt) -> list[Message]:
        """The history from the last prompt the person typed to the end, to show on resume.

        Read from ``messages``, not ``view``: after compaction the view starts with a user
        message holding the summary, which the person never typed. ``typed`` tells a
        person's prompt from one the agent wrote (a continuation request, say).
        """
        for index in range(len(self.messages) - 1, -1, -1):
            if typed(self.messages[index]):
                return self.messages[index:]
        return []


def settled_results(events: list[dict[str, Any]]) -> dict[str, ToolResultBlock]:
    """The results events recorded for calls (``tool_use_id`` and a non-empty
    ``call_result``: a sub-agent that finished), by call id."""
    settled = {}
    for event in events:
        call, text = event.get("tool_use_id"), event.get("call_result")
        if isinstance(call, str) and isinstance(text, str) and text:
            is_error = event.get("call_is_error") is True
            settled[call] = ToolResultBlock(tool_use_id=call, content=text, is_error=is_error)
    return settled


def build_session(
    scanned: ScannedFile, path: Path, hash_limit: int = DEFAULT_HASH_LIMIT
) -> LoadedSession:
    """Replay the records of ``scanned`` into a `LoadedSession` (view repaired)."""
    header = scanned.header
    messages: list[Message] = []
    # The view: the messages of the last compaction, then every message after it.
    compacted: list[Message] = []
    view_start = 0
    events: list[dict[str, Any]] = []
    state = ModelState(chain=list(header.model_chain), current=_first(header.model_chain))
    usage = _UsageCount()
    checkpoints: list[CheckpointRecord] = []
    turn_ends: list[TurnEndRecord] = []
    last_seen: dict[str, SeenFile | CheckpointRecord] = {}
    for record in scanned.records:
        # Dispatch on the tag: isinstance on pydantic models is slow over 100k records.
        # A repeated header (no writer writes one) matches no branch: it changes nothing.
        if record.type == "message":
            messages.append(record.message)
            if record.usage is not None:  # an answer's tokens, saved in its line
                usage.add(record.usage, record.model or "", record.kind or "turn")
            for seen in record.files or ():  # the files its tool results read or wrote
                last_seen[seen.path] = seen
        elif record.type == "event":
            events.append(record.event)
        elif record.type == "usage":  # tokens on a line of their own (every one, in old files)
            usage.add(record.usage, record.model, record.kind)
        elif record.type == "file_state" or record.type == "checkpoint":
            last_seen[record.path] = record
            if record.type == "checkpoint":
                checkpoints.append(record)
        elif record.type == "compaction":
            compacted, view_start = record.messages, len(messages)
        elif record.type == "model_switch":
            state = _switch(state, record)
        elif record.type == "turn_end":
            turn_ends.append(record)
    view = [*compacted, *messages[view_start:]]
    repaired, repairs = repair_history(view, settled_results(events))
    tail = repaired[-1] if repaired and view and view[-1].tool_uses else None
    return LoadedSession(
        id=header.id,
        path=path,
        header=header,
        messages=messages,
        view=repaired,
        events=events,
        model_state=state,
        usage_total=usage.total,
        usage_by_model=usage.by_model,
        usage_by_kind=usage.by_kind,
        checkpoints=checkpoints,
        turn_ends=turn_ends,
        warnings=list(scanned.warnings),
        repairs=repairs,
        changed_files=changed_files(last_seen, hash_limit),
        unsaved_tail=tail,
    )


@dataclass
class _UsageCount:
    total: Usage = field(default_factory=Usage)
    by_model: dict[str, Usage] = field(default_factory=dict)
    by_kind: dict[str, Usage] = field(default_factory=dict)

    def add(self, usage: Usage, model: str, kind: str) -> None:
        self.total = self.total + usage
        self.by_model[model] = self.by_model.get(model, Usage()) + usage
        self.by_kind[kind] = self.by_kind.get(kind, Usage()) + usage


def _first(chain: list[str]) -> str:
    return chain[0] if chain else ""


def _switch(state: ModelState, record: ModelSwitchRecord) -> ModelState:
    chain = list(record.chain) if record.chain is not None else state.chain
    return ModelState(chain=chain, current=record.model, sticky_fallback=record.sticky)
