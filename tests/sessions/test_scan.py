"""Scanning a whole file finds exactly what reading it line by line with `parse_record` finds.

The scan validates lines in a tight loop and looks into a line only when the validator
refuses it; these tests hold it to the one-line-at-a-time reading: every hostile kind of line
is reported as damaged with its number and offset, blank lines are no damage, a newer
version's record is a warning, and every valid record is kept in order.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from providers import Message
from sessions import SessionError, SessionStore
from sessions.records import MAX_LINE_BYTES, Unreadable, parse_record
from sessions.scan import scan_bytes
from tests.sessions.test_hostile_records import HOSTILE

NEWER = json.dumps({"ts": 5, "type": "hologram", "beam": 1}).encode()


def _good_lines(store: SessionStore, tmp_path: Path, messages: int) -> list[bytes]:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        for number in range(messages):
            writer.append_message(Message.user(f"prompt {number}"))
    return writer.path.read_bytes().split(b"\n")[:-1]


def _interleaved(good: list[bytes], bad: list[bytes]) -> list[bytes]:
    """The header, then a bad line after every good one (and a few bad ones in a row)."""
    lines = [good[0], *bad[:3]]
    for index, line in enumerate(good[1:]):
        lines += [line, bad[(index + 3) % len(bad)]]
    return lines


@pytest.mark.parametrize("tail", [b"", b'{"ts": 5, "type": "mess'])
def test_every_kind_of_damage_is_found_where_reading_line_by_line_finds_it(
    store: SessionStore, tmp_path: Path, tail: bytes
) -> None:
    bad = [*HOSTILE.values(), b"", b"   \t", NEWER]
    lines = _interleaved(_good_lines(store, tmp_path, 40), bad)
    data = b"\n".join(lines) + b"\n" + tail

    scanned = scan_bytes(tmp_path / "s.jsonl", data)

    parsed = [parse_record(line) for line in lines]
    assert scanned.header == parsed[0]
    assert scanned.records == [p for p in parsed[1:] if not isinstance(p, Unreadable)]
    damaged = [
        (number, line, p.reason)
        for number, (line, p) in enumerate(zip(lines, parsed, strict=True), start=1)
        if isinstance(p, Unreadable) and line.strip() and p.newer_type is None
    ]
    assert [(d.number, d.content, d.reason) for d in scanned.damaged_lines] == damaged
    assert len(damaged) > len(HOSTILE)  # each kind, several times
    for line in scanned.damaged_lines:
        assert data[line.offset : line.offset + len(line.content) + 1] == line.content + b"\n"
    newer = [n for n, line in enumerate(lines, start=1) if line == NEWER]
    assert [w for w in scanned.warnings if "unknown record type" in w] == [
        f"skipped line {n}: unknown record type 'hologram'" for n in newer
    ]
    assert scanned.end == len(data) - len(tail)
    assert scanned.damaged


def test_a_clean_file_has_no_damage_and_ends_at_its_size(
    store: SessionStore, tmp_path: Path
) -> None:
    lines = _good_lines(store, tmp_path, 5)
    data = b"\n".join(lines) + b"\n"

    scanned = scan_bytes(tmp_path / "s.jsonl", data)

    assert [r.message for r in scanned.records] == [  # type: ignore[union-attr]
        Message.user(f"prompt {n}") for n in range(5)
    ]
    assert (scanned.damaged_lines, scanned.warnings, scanned.end) == ([], [], len(data))
    assert not scanned.damaged


def test_damage_before_the_header_is_skipped_but_a_record_there_is_no_session(
    store: SessionStore, tmp_path: Path
) -> None:
    header, *rest = _good_lines(store, tmp_path, 2)

    scanned = scan_bytes(tmp_path / "s.jsonl", b"\n".join([b"garbage", header, *rest, b""]))
    assert [d.number for d in scanned.damaged_lines] == [1]

    with pytest.raises(SessionError, match="has no header line"):
        scan_bytes(tmp_path / "s.jsonl", b"\n".join([*rest, header, b""]))


def test_a_line_over_the_size_limit_is_damage_not_parsed(
    store: SessionStore, tmp_path: Path
) -> None:
    header, first, second = _good_lines(store, tmp_path, 2)
    huge = first.replace(b"prompt 0", b"a" * MAX_LINE_BYTES)

    scanned = scan_bytes(tmp_path / "s.jsonl", b"\n".join([header, huge, second, b""]))

    [line] = scanned.damaged_lines
    assert (line.number, line.offset) == (2, len(header) + 1)
    assert "longer than" in line.reason
    assert [r.message for r in scanned.records] == [Message.user("prompt 1")]  # type: ignore[union-attr]


def test_a_repeated_header_changes_nothing(store: SessionStore, tmp_path: Path) -> None:
    header, *rest = _good_lines(store, tmp_path, 2)
    other = json.loads(header) | {"id": "0" * len(json.loads(header)["id"]), "cwd": "/elsewhere"}
    path = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    path.write_bytes(b"\n".join([header, rest[0], json.dumps(other).encode(), *rest[1:], b""]))

    loaded = store.load(path.stem)

    assert loaded.header == parse_record(header)
    assert loaded.messages == [Message.user("prompt 0"), Message.user("prompt 1")]
    assert loaded.warnings == []
