"""Reading a session file back: the longest valid prefix of records, and what was wrong."""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from sessions.errors import SessionError
from sessions.records import FORMAT_VERSION, RECORD_ADAPTER, RECORD_TYPES, Header, Record


@dataclass
class ScannedFile:
    """The records of a session file up to the first damage, and where that prefix ends."""

    header: Header
    records: list[Record]
    """Every record after the header, in file order."""
    valid_size: int
    """Bytes of the file that hold the header and ``records`` (each with its newline)."""
    damaged: bool = False
    """Whether anything after ``valid_size`` was dropped (a torn or corrupt line)."""
    warnings: list[str] = field(default_factory=list)


def scan_file(path: Path) -> ScannedFile:
    """Read ``path``, keeping the longest valid prefix of records.

    Raises:
        SessionError: the file cannot be read, or its header is missing or from a newer version.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror}") from exc
    with _gc_paused():
        return _scan(path, data)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    # Parsing allocates hundreds of thousands of acyclic objects; the cyclic collector's
    # passes over them more than doubled the load time of a 100k-message session.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _scan(path: Path, data: bytes) -> ScannedFile:
    # Split on b"\n" only: JSON escapes newlines, but str.splitlines would also split on U+2028.
    lines = data.split(b"\n")
    tail = lines.pop()
    header: Header | None = None
    records: list[Record] = []
    warnings: list[str] = []
    offset = 0
    for number, raw in enumerate(lines, start=1):
        if raw.strip():
            try:
                record = RECORD_ADAPTER.validate_json(raw)
            except ValidationError:
                kind = _unknown_type(raw)
                if kind is None:
                    later = len(lines) - number + (1 if tail.strip() else 0)
                    warnings.append(_damage_warning(number, later, len(records)))
                    return _finish(path, header, records, offset, warnings, damaged=True)
                warnings.append(f"skipped line {number}: unknown record type {kind!r}")
            else:
                if header is None and not isinstance(record, Header):
                    raise SessionError(f"{path} is not a session file (it has no header line)")
                if header is None:
                    assert isinstance(record, Header)
                    header = record
                elif not isinstance(record, Header):
                    records.append(record)
        offset += len(raw) + 1
    if tail.strip():
        warnings.append(
            "dropped an incomplete last line (the agent stopped while writing it); "
            "everything before it was kept"
        )
    return _finish(path, header, records, offset, warnings, damaged=bool(tail))


def _unknown_type(raw: bytes) -> str | None:
    """The ``type`` of a well-formed record this version does not know (a newer writer's)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None
    kind: str = value["type"]
    return None if kind in RECORD_TYPES else kind


def _damage_warning(number: int, later: int, kept: int) -> str:
    if later == 0:
        return f"dropped a damaged last line ({number}); everything before it was kept"
    return (
        f"line {number} of the session file is damaged: kept the {kept} records before it, "
        f"ignored it and the {later} lines after it"
    )


def _finish(
    path: Path,
    header: Header | None,
    records: list[Record],
    offset: int,
    warnings: list[str],
    *,
    damaged: bool,
) -> ScannedFile:
    if header is None:
        raise SessionError(f"{path} is not a usable session file: its header line is missing")
    if header.format > FORMAT_VERSION:
        raise SessionError(
            f"session {header.id} was saved by a newer version of agent "
            f"(format {header.format}); upgrade agent to resume it"
        )
    return ScannedFile(header, records, offset, damaged, warnings)
