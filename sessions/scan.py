"""Reading a session file back: every valid record, and which lines were damaged.

A damaged line anywhere (garbage, a record that fails validation, bad UTF-8) is skipped and
reported; the records before and after it are all kept. Only an unfinished last line (the
agent stopped while writing it) is dropped as torn. A damaged header line is rebuilt from
what survives (the id from the file name, the time from the first record), so one bad byte
on line 1 does not cost the whole conversation; what only the header knew (the directory
and the model chain) is lost, and the session goes on in the directory it is resumed from.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sessions.errors import SessionError
from sessions.records import (
    FORMAT_VERSION,
    MAX_LINE_BYTES,
    RECORD_VALIDATOR,
    Header,
    Record,
    unreadable,
    validate_record,
)
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
    """Every record after the header, in file order (a repeated header, which no writer
    writes, is kept here and ignored by the replay)."""
    end: int
    """Bytes of the file up to and including its last newline (after it: a torn line, if any)."""
    damaged_lines: list[DamagedLine] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    size: int = 0
    """Bytes of the whole file."""
    header_rebuilt: bool = False
    """The header line was damaged and ``header`` was rebuilt (mending writes it back)."""

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
    parsed, problems = _parse_lines(lines)
    first = parsed[0] if parsed else None
    rebuilt = None
    if first is not None and first.type == "header":
        header = first
    else:
        rebuilt = _rebuilt_header(path, lines, parsed, problems.damaged)
        if rebuilt is None:
            raise SessionError(_no_header(path, problems.damaged))
        header = rebuilt
    if header.format > FORMAT_VERSION:
        raise SessionError(
            f"session {header.id} was saved by a newer version of agent "
            f"(format {header.format}); upgrade agent to resume it"
        )
    records = parsed
    if rebuilt is None:
        del records[0]  # in place: a copy of the list, or a filter, would cost a pass over it
    warnings = problems.warnings
    if rebuilt is not None:
        warnings.append(
            f"the header line was damaged and has been rebuilt; the session now belongs to "
            f"{rebuilt.cwd} and uses the models configured here"
        )
    if problems.damaged:
        warnings.append(_damage_warning(problems.damaged, len(records)))
    if tail.strip():
        warnings.append(
            "dropped an incomplete last line (the agent stopped while writing it); "
            "everything before it was kept"
        )
    end = len(data) - len(tail)
    scanned = ScannedFile(header, records, end, problems.damaged, warnings, size=len(data))
    scanned.header_rebuilt = rebuilt is not None
    return scanned


def _rebuilt_header(
    path: Path, lines: list[bytes], parsed: list[Record], damaged: list[DamagedLine]
) -> Header | None:
    """A header for a file whose first line (blank lines aside) is damaged but whose records
    survive; None when the file does not look like a session (its first line is a record, or
    nothing survives)."""
    if not parsed or not damaged:
        return None
    if any(line.strip() for line in lines[: damaged[0].number - 1]):
        return None
    try:
        return Header(ts=parsed[0].ts, id=path.stem, cwd=os.getcwd(), model_chain=[])
    except (ValueError, OSError):  # a file name that is no session id; no current directory
        return None


def _parse_lines(lines: list[bytes]) -> tuple[list[Record], _Problems]:
    """Every valid record on ``lines``, in order, and what is wrong with the other lines.

    The loop does nothing per line but validate and append: the checks a line needs only
    when it holds no record (blank, damaged, from a newer version) run in `_Problems.note`,
    after the validator raised. Checked before validating, they cost 15–20 % on top of the
    validation of a 100k-message session; now the loop takes what a bare list comprehension
    of the validator does.
    """
    records: list[Record] = []
    append = records.append
    problems = _Problems(lines)
    too_long = max(map(len, lines), default=0) > MAX_LINE_BYTES
    validate = validate_record if too_long else RECORD_VALIDATOR.validate_json
    remaining = iter(lines)
    while True:
        try:
            for raw in remaining:
                append(validate(raw))
        except ValueError as error:  # ValidationError is one
            # Every line before this one became a record or was noted.
            problems.note(len(records) + problems.noted + 1, raw, error)
            continue
        return records, problems


class _Problems:
    """The lines of a file that hold no record: damaged ones, and warnings about the rest."""

    def __init__(self, lines: list[bytes]) -> None:
        self.damaged: list[DamagedLine] = []
        self.warnings: list[str] = []
        self.noted = 0
        """Lines noted so far."""
        self._lines = lines
        self._counted = 0
        """Lines whose bytes are summed in ``_offset``: the offsets of damaged lines are
        found only when there is one, and each is counted from the one before."""
        self._offset = 0

    def note(self, number: int, raw: bytes, error: ValueError) -> None:
        """Record why line ``number`` (``raw``) gave no record (``error``, as validated)."""
        self.noted += 1
        if not raw or raw.isspace():
            return  # blank lines are no damage
        why = unreadable(raw, error)
        if why.newer_type is not None:
            self.warnings.append(f"skipped line {number}: unknown record type {why.newer_type!r}")
        else:
            self.damaged.append(DamagedLine(number, self._offset_of(number), raw, why.reason))

    def _offset_of(self, number: int) -> int:
        before = self._lines[self._counted : number - 1]
        self._offset += sum(map(len, before)) + len(before)
        self._counted = number - 1
        return self._offset


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
