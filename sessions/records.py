"""The lines of a session file: a header, then records discriminated by ``type``.

Every record carries ``ts`` (seconds since the epoch). The file is append-only; a record is
never rewritten, so the history is complete even after compaction.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agent.llm.messages import Message, Usage

FORMAT_VERSION = 1
TurnStatus = Literal["done", "failed", "interrupted", "max_steps"]


class RecordBase(BaseModel):
    """Fields every record shares."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    ts: float


class Header(RecordBase):
    """The first line of every session file."""

    type: Literal["header"] = "header"
    format: int = FORMAT_VERSION
    id: str
    cwd: str
    model_chain: list[str]


class MessageRecord(RecordBase):
    """One conversation message, exactly as sent to or received from the model."""

    type: Literal["message"] = "message"
    message: Message


class EventRecord(RecordBase):
    """An `agent.llm.events.Event` as ``model_dump(mode="json")``; kept as a dict on load."""

    type: Literal["event"] = "event"
    event: dict[str, Any]


class CompactionRecord(RecordBase):
    """The compacted message list that replaces the conversation view from here on."""

    type: Literal["compaction"] = "compaction"
    messages: list[Message]
    stats: dict[str, Any] = Field(default_factory=dict)


class ModelSwitchRecord(RecordBase):
    """The model now in use; ``sticky`` when a fallback holds for the rest of the session."""

    type: Literal["model_switch"] = "model_switch"
    model: str
    sticky: bool = False
    reason: str = ""
    chain: list[str] | None = None
    """A new model chain (after ``/model``); None keeps the current one."""


class UsageRecord(RecordBase):
    """Token usage of one response."""

    type: Literal["usage"] = "usage"
    usage: Usage
    model: str = ""


class CheckpointRecord(RecordBase):
    """What a file looked like before the session wrote it, for ``/undo``."""

    type: Literal["checkpoint"] = "checkpoint"
    path: str
    existed_before: bool
    content_hash: str | None = None
    """sha256 hex digest of the content before the write; None if the file did not exist."""
    turn: int
    backup: str | None = None
    """Where the previous content was saved, if it was."""


class FileStateRecord(RecordBase):
    """A file as the session last saw it (after a tool read or wrote it)."""

    type: Literal["file_state"] = "file_state"
    path: str
    exists: bool
    size: int | None = None
    mtime_ns: int | None = None
    sha256: str | None = None
    """None when the file was too large to hash; then size and mtime decide."""


class TurnEndRecord(RecordBase):
    """How a turn ended."""

    type: Literal["turn_end"] = "turn_end"
    status: TurnStatus
    error: str | None = None


Record = Annotated[
    Header
    | MessageRecord
    | EventRecord
    | CompactionRecord
    | ModelSwitchRecord
    | UsageRecord
    | CheckpointRecord
    | FileStateRecord
    | TurnEndRecord,
    Field(discriminator="type"),
]
RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)
RECORD_TYPES: frozenset[str] = frozenset(
    model.model_fields["type"].default
    for model in (
        Header,
        MessageRecord,
        EventRecord,
        CompactionRecord,
        ModelSwitchRecord,
        UsageRecord,
        CheckpointRecord,
        FileStateRecord,
        TurnEndRecord,
    )
)
