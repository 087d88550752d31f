"""What a tool is: a pydantic input model, a description for the model, and an async `run`.

Tools raise `ToolError` for failures they understand (with a category and a hint) and may
raise anything else for failures they do not; the executor turns both into results.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from providers.events import Event
from providers.messages import ImageBlock, ToolResultBlock
from tools.settings import ToolSettings
from tools.text import Gap
from tools.workspace import resolve_in_workspace

ToolKind = Literal["read", "edit", "command", "network"]
"""What approval a tool needs: reads never, edits unless `ApprovalMode.AUTO_EDIT`, commands
and network reads (web_fetch) unless `ApprovalMode.FULL_AUTO`."""


class ErrorCategory(StrEnum):
    """How a failure should be handled."""

    TRANSIENT = "transient"
    """May succeed if tried again unchanged (busy file, timeout of a read)."""
    PERMANENT = "permanent"
    """Will fail again unchanged: the call itself must change."""
    PARTIAL = "partial"
    """Part of the work was done; the result says which part."""


class ToolError(Exception):
    """A failure a tool understands: what happened, its category and what to try instead."""

    def __init__(
        self, message: str, *, category: ErrorCategory = ErrorCategory.PERMANENT, hint: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.category = category
        self.hint = hint


@dataclass(frozen=True)
class FileSeen:
    """A file as a tool read it whole: its resolved path, its size and modification time
    (taken before the read) and the sha256 of the bytes read. The session keeps it as the
    state the model last saw the file in, without reading the file again."""

    path: Path
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class ToolOutput:
    """What a tool produced. ``partial`` marks work that only partly succeeded.

    ``gap`` is output the tool already left out of ``content`` (a command's flood, kept only
    in head and tail), ``whole`` the file that holds all of it: the executor's one cut to
    the output limit counts the gap in and names the file.
    """

    content: str
    is_error: bool = False
    partial: bool = False
    gap: Gap | None = None
    whole: str | None = None
    images: tuple[ImageBlock, ...] = ()
    """Pictures the result hands the model (``read_file`` of an image)."""
    seen: FileSeen | None = None
    """The file the tool read whole, as it read it (``read_file``)."""

    def result(self, tool_use_id: str, content: str) -> ToolResultBlock:
        """The result block for the call ``tool_use_id``, with ``content`` as fitted."""
        return ToolResultBlock(
            tool_use_id=tool_use_id, content=content, is_error=self.is_error, images=self.images
        )


@dataclass
class ToolContext:
    """What a running tool may use: the workspace, settings, checkpoint hook and redactor.

    ``record_checkpoint`` must be called with a path before the tool changes that file, so
    the change can be undone (and rolled back if the call fails part way).
    """

    workspace: Path
    settings: ToolSettings
    record_checkpoint: Callable[[Path], None]
    notes: list[str] = field(default_factory=list)
    emit: Callable[[Event], None] = field(default=lambda event: None)
    """Reports an event (e.g. protected files put back) to the person and the session."""
    redact: Callable[[str], str] = field(default=lambda text: text)
    """Hides secrets; a tool that cuts its output itself must redact before cutting, or a
    key split by the cut would survive half-masked."""
    read_denied: Callable[[Path], bool] = field(default=lambda path: False)
    """Whether a rule withholds reading this absolute path (a ``Read`` deny rule)."""
    tool_use_id: str = ""
    """The id of the call being run (a sub-agent's transcript is linked to it)."""
    turn: int = 0
    """The executor's turn (undo's numbering): a sub-agent's edits are undone with it."""
    outputs: Path | None = None
    """A private directory where a tool may keep a whole output too long for the model
    (`ToolOutput.whole`); None: nowhere."""

    def resolve(self, raw: str) -> Path:
        """``raw`` resolved inside the workspace; raises `PathOutsideWorkspace` otherwise."""
        return resolve_in_workspace(self.workspace, raw)

    def withheld(self, path: Path) -> bool:
        """Whether a reading tool must skip ``path`` (or the file a link there points at):
        a tool that opens or lists many files checks each, and says how many it withheld."""
        if self.read_denied(path):
            return True
        return path.is_symlink() and self.read_denied(path.resolve())


InputT = TypeVar("InputT", bound=BaseModel)


class Tool(ABC, Generic[InputT]):
    """A tool the model can call.

    Subclasses set ``name``, ``description`` (written for the model), ``input_model``,
    ``idempotent`` (safe to retry after a transient failure) and ``kind`` (what approval it
    needs), and implement `run`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    idempotent: ClassVar[bool] = False
    kind: ClassVar[ToolKind] = "read"

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as the model sees it."""
        return self.input_model.model_json_schema()

    def timeout(self, args: InputT, settings: ToolSettings) -> float:
        """Seconds after which the executor abandons the call."""
        return settings.file_tool_timeout

    def paths(self, args: InputT) -> list[str]:
        """The workspace paths this call touches (checked by the safety policy)."""
        return []

    def command(self, args: InputT) -> str | None:
        """The shell command this call runs, if any (checked by the safety policy)."""
        return None

    def domain(self, args: InputT) -> str | None:
        """The host this call reaches over the network, if any (``domain:`` rules)."""
        return None

    def summary(self, args: InputT) -> str:
        """One line for the person, e.g. in an approval prompt."""
        return f"{self.name} {', '.join(self.paths(args))}".strip()

    def details(self, args: InputT, ctx: ToolContext) -> str:
        """What the person should see before approving (a diff, the command)."""
        return self.summary(args)

    @abstractmethod
    async def run(self, args: InputT, ctx: ToolContext) -> ToolOutput:
        """Do the work; raise `ToolError` for failures with a known category."""
