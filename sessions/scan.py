"""Reading a session file back: every valid record, and which lines were damaged.

A damaged line anywhere (garbage, a record that fails validation, bad UTF-8) is skipped and
reported; the records before and after it are all kept. Only an unfinished last line (the
agent stopped while writing it) is dropped as torn.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sessions.errors import SessionError
from sessions.records import FORMAT_VERSION, Header, Record, Unreadable, parse_record
from sessions.storage import read_file

_LISTED_LINES = 5


@dataclass(frozen=True)
class DamagedLine:
    """A complete line of a session file that holds no usable record."""

    number: int
    offset: int
    """Where the line starts in the file."""
    content: bytes
    """The line as stored, without its newline."""
    reason: str


@dataclass
class ScannedFile:
    """The records of a session file, and what in it was damaged."""

    header: Header
    records: list[Record]
    """Every record after the header, in file order."""
    end: int
    """Bytes of the file up to and including its last newline (after it: a torn line, if any)."""
    damaged_lines: list[DamagedLine] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    size: int = 0
    """Bytes of the whole file."""

    @property
    def damaged(self) -> bool:
        """Whether the file needs mending: damaged lines to set aside or a torn tail to cut."""
        return bool(self.damaged_lines) or self.size > self.end


def scan_file(path: Path) -> ScannedFile:
    """Read and scan the session file at ``path`` (refused if it is a symbolic link).

    Raises:
        SessionError: the file cannot be read, or its header is missing or from a newer version.
    """
    return scan_bytes(path, read_file(path))


def scan_bytes(path: Path, data: bytes) -> ScannedFile:
    """Scan ``data``, the content of the session file at ``path``.

    Raises:
        SessionError: the header is missing or from a newer version.
    """
    with collector_paused():
        return _scan(path, data)


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Keep the cyclic garbage collector off inside; with ``freeze``, exempt what was built.

    Parsing and rebuilding a session allocate millions of acyclic objects; the collector's
    passes over them more than doubled the load time of a 100k-message session. ``freeze``
    (`gc.freeze`) moves every object alive at the end out of its reach for good: a resumed
    session lives as long as the process, and each later full collection (several during
    the first turn) would walk all of it again. Frozen objects are still freed by reference
    counting when the session is dropped.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _scan(path: Path, data: bytes) -> ScannedFile:
    # Split on b"\n" only: JSON escapes newlines, but str.splitlines would also split on U+2028.
    lines = data.split(b"\n")
    tail = lines.pop()
    header: Header | None = None
    records: list[Record] = []
    damaged: list[DamagedLine] = []
    warnings: list[str] = []
    offset = 0
    for number, raw in enumerate(lines, start=1):
        if raw and not raw.isspace():  # strip() would copy every line
            record = parse_record(raw)
            if isinstance(record, Unreadable):
                if record.newer_type is not None:
                    warnings.append(
                        f"skipped line {number}: unknown record type {record.newer_type!r}"
                    )
                else:
                    damaged.append(DamagedLine(number, offset, raw, record.reason))
            elif header is None:
                if record.type != "header":
                    raise SessionError(_no_header(path, damaged))
                header = record
            elif record.type != "header":
                records.append(record)
        offset += len(raw) + 1
    if header is None:
        raise SessionError(_no_header(path, damaged))
    if header.format > FORMAT_VERSION:
        raise SessionError(
            f"session {header.id} was saved by a newer version of agent "
            f"(format {header.format}); upgrade agent to resume it"
        )
    if damaged:
        warnings.append(_damage_warning(damaged, len(records)))
    if tail.strip():
        warnings.append(
            "dropped an incomplete last line (the agent stopped while writing it); "
            "everything before it was kept"
        )
    return ScannedFile(header, records, offset, damaged, warnings, size=len(data))


def _no_header(path: Path, damaged: list[DamagedLine]) -> str:
    if damaged and damaged[0].number == 1:
        return (
            f"the header line of session file {path} is damaged ({damaged[0].reason}), "
            "so it cannot be resumed; the file was left as it is"
        )
    return f"{path} is not a session file: it has no header line"


def _damage_warning(damaged: list[DamagedLine], kept: int) -> str:
    numbers = ", ".join(str(line.number) for line in damaged[:_LISTED_LINES])
    more = ", …" if len(damaged) > _LISTED_LINES else ""
    lines = "line" if len(damaged) == 1 else "lines"
    return (
        f"skipped {len(damaged)} damaged {lines} of the session file ({numbers}{more}: "
        f"{damaged[0].reason}); all {kept} valid records were loaded"
    )
