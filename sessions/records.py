"""The lines of a session file: a header, then records discriminated by ``type``.

Every record carries ``ts`` (seconds since the epoch). The file is append-only; a record is
never rewritten, so the history is complete even after compaction.

This module is the one place a line of a session file becomes a record: `parse_record` returns
a record or says why the line is not one, and never raises; a loop over many lines calls
`RECORD_VALIDATOR` itself and asks `unreadable` about the lines it refuses. Every field is
checked with limits (finite times, paths without NUL, 64-bit counts) and a line's size and
nesting are bounded (`MAX_LINE_BYTES`, `MAX_DEPTH`), so nothing read back can break the code
that uses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from providers.messages import Message, Usage
from sessions.ids import ALPHABET, ID_LENGTH

FORMAT_VERSION = 1
MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line read as a record; `SessionWriter` refuses to write a longer one."""
MAX_DEPTH = 100
"""The deepest nesting of ``[`` and ``{`` `SessionWriter` writes. Reading needs no check of its
own: pydantic's JSON parser refuses lines nested deeper than about 200 levels with a
ValidationError (Python's ``json`` would raise RecursionError near 1000), so every line that
parses is shallow enough for the code that uses it, and every line written parses."""
MAX_TS = 1e10
"""Later than the year 2286: damage, not a time (and beyond what ``time.localtime`` takes)."""
_INT64 = 2**63


class TurnStatus(StrEnum):
    """How a turn ended: what the loop reports and a session file keeps."""

    DONE = "done"
    FAILED = "failed"
    MAX_STEPS = "max_steps"
    REPEATED_CALL = "repeated_call"
    """The model kept making the same call (same result, or the same failure)."""
    INTERRUPTED = "interrupted"


Timestamp = Annotated[float, Field(ge=0, le=MAX_TS, allow_inf_nan=False)]
PathText = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^\x00]*$")]
"""A path as the OS takes it: ``os.stat`` raises ValueError on a NUL byte."""
Int64 = Annotated[int, Field(ge=-_INT64, lt=_INT64)]
Count = Annotated[int, Field(ge=0, lt=_INT64)]


def _bounded(usage: Usage) -> Usage:
    if any(not 0 <= count < _INT64 for count in usage.model_dump().values()):
        raise ValueError("token counts must be between 0 and 2**63")
    return usage


TokenUsage = Annotated[Usage, AfterValidator(_bounded)]
"""An answer's `Usage`, every count a 64-bit one."""


def _absent(value: object) -> bool:
    return value is None


class RecordBase(BaseModel):
    """Fields every record shares."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    ts: Timestamp


class Header(RecordBase):
    """The first line of every session file."""

    type: Literal["header"] = "header"
    format: int = FORMAT_VERSION
    id: str = Field(pattern=f"^[{ALPHABET}]{{{ID_LENGTH}}}$")
    cwd: PathText
    model_chain: list[str]
    parent: str | None = Field(default=None, pattern=f"^[{ALPHABET}]{{{ID_LENGTH}}}$")
    """A sub-agent's transcript: the session whose `task` call started it."""
    parent_tool_use_id: str | None = Field(default=None, max_length=256)
    """That `task` call's id."""


class SeenFile(BaseModel):
    """A file as the session last saw it (after a tool read or wrote it)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    path: PathText
    exists: bool
    size: Count | None = None
    mtime_ns: Int64 | None = None
    sha256: str | None = None
    """None when the file was too large to hash; then size and mtime decide."""


class MessageRecord(RecordBase):
    """One conversation message, exactly as sent to or received from the model.

    A step's records share lines, so a step writes fewer of them:
    - a model's answer carries the tokens of the request it answered (``usage``, ``model``,
      ``kind``, as a `UsageRecord` has them) when they arrived in the same step. Files
      written before that keep them in a `UsageRecord` of their own, and tokens that no
      saved answer carries still get one;
    - tool results carry the state of the files their calls read or wrote (``files``), as
      `FileStateRecord` lines did in files written before.
    """

    type: Literal["message"] = "message"
    message: Message
    usage: TokenUsage | None = Field(default=None, exclude_if=_absent)
    model: str | None = Field(default=None, exclude_if=_absent)
    kind: str | None = Field(default=None, exclude_if=_absent)
    files: list[SeenFile] | None = Field(default=None, exclude_if=_absent)

    @field_validator("files", mode="wrap")
    @classmethod
    def _good_files(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A damaged file state is left out, not the message with it: the conversation
        matters more than one file's change check on resume."""
        try:
            return handler(value)
        except ValidationError:
            if not isinstance(value, list):
                return None
            good = []
            for item in value:
                try:
                    good.append(SeenFile.model_validate(item))
                except ValidationError:
                    continue
            return good or None


class EventRecord(RecordBase):
    """An `providers.events.Event` as ``model_dump(mode="json")``; kept as a dict on load."""

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
    usage: TokenUsage
    model: str = ""
    kind: str = "turn"
    """What the request was for (`providers.RequestKind`: turn, compaction, ...); kept as
    text, so a session written by a later version with a new kind still loads."""


class CheckpointRecord(RecordBase):
    """What a file looked like before the session wrote it, for ``/undo``."""

    type: Literal["checkpoint"] = "checkpoint"
    path: PathText
    existed_before: bool
    content_hash: str | None = None
    """sha256 hex digest of the content before the write; None if the file did not exist."""
    turn: Count
    backup: PathText | None = None
    """Where the previous content was saved, if it was."""


class FileStateRecord(RecordBase, SeenFile):
    """A `SeenFile` on a line of its own, as files written before `MessageRecord` had
    ``files`` keep it: read, no longer written."""

    type: Literal["file_state"] = "file_state"


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

# A JSON string, escapes included (the unrolled form: no backtracking on long strings).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def too_deep(line: bytes) -> bool:
    """Whether ``line`` nests ``[`` and ``{`` more than `MAX_DEPTH` levels (outside strings)."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return False  # the common case, at the speed of bytes.count
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b"", line)):
        depth += 1 if match[0] in (b"[", b"{") else -1
        if depth > MAX_DEPTH:
            return True
    return False


@dataclass(frozen=True)
class Unreadable:
    """Why a line of a session file is not a record this version can use."""

    reason: str
    newer_type: str | None = None
    """The ``type`` of a well-formed record this version does not know (a newer writer's)."""


RECORD_VALIDATOR = RECORD_ADAPTER.validator
"""Validates one line into a `Record` (``validate_json``), raising ValidationError on any
flaw. Loops over many lines call its bound method directly: the adapter's own
``validate_json`` adds ~10 % per line in argument checks, a Python wrapper as much again."""


def parse_record(line: bytes) -> Record | Unreadable:
    """The record on one line (without its newline), or why there is none. Never raises."""
    try:
        return validate_record(line)
    except ValueError as error:
        return unreadable(line, error)


def validate_record(line: bytes) -> Record:
    """The record on one line (without its newline).

    Raises:
        ValueError: the line holds no valid record (a ValidationError, or a line longer than
            `MAX_LINE_BYTES`); `unreadable` says why.
    """
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"it is longer than {MAX_LINE_BYTES} bytes")
    return RECORD_VALIDATOR.validate_json(line)  # type: ignore[no-any-return]


def unreadable(line: bytes, error: ValueError) -> Unreadable:
    """Why ``line`` is not a record, from the ``error`` `validate_record` raised for it."""
    if isinstance(error, ValidationError):
        return Unreadable(_first_problem(error), _newer_type(line))
    return Unreadable(str(error))


def _first_problem(error: ValidationError) -> str:
    problem = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in problem["loc"])
    text = f"{where}: {problem['msg']}" if where else problem["msg"]
    return text if len(text) <= 120 else text[:119] + "…"


def _newer_type(line: bytes) -> str | None:
    try:
        value = pydantic_core.from_json(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None
    kind: str = value["type"]
    return None if kind in RECORD_TYPES else kind


class Glance(BaseModel):
    """The two fields every record has, checked without validating the rest (for listing)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: str
    ts: Timestamp


def glance(line: bytes) -> Glance | None:
    """``type`` and ``ts`` of the record on ``line``; None if it has no usable ones."""
    if len(line) > MAX_LINE_BYTES:
        return None
    try:
        return Glance.model_validate_json(line)
    except ValidationError:
        return None
