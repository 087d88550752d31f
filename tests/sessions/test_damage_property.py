"""Property: whatever damage a session file takes, every undamaged record is kept and resumes.

Random valid conversations are written through the real store; then garbage lines, records
that fail validation, bad UTF-8, absurd nesting, duplicated lines and a torn tail are put in
at random places (the header excepted: without it there is no session to resume).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from providers import Message
from sessions import Redactor, SessionStore, history_problems
from sessions.records import MessageRecord, Unreadable, parse_record
from tests.compaction.conversations import conversations


def _is_damage(line: bytes) -> bool:
    parsed = parse_record(line)
    return bool(line.strip()) and isinstance(parsed, Unreadable) and parsed.newer_type is None


@dataclass(frozen=True)
class Damage:
    """One change to the file: ``line`` put at ``position`` (replacing what was there?)."""

    position: int
    line: bytes | None
    """The damaged line; None duplicates the line at ``position``."""
    replace: bool


def _garbage(valid: bytes, draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "torn", "utf8", "schema", "deep"]))
    if kind == "bytes":
        return draw(st.binary(min_size=1, max_size=80)).replace(b"\n", b"\x00")
    if kind == "torn":
        return valid[: draw(st.integers(1, len(valid) - 1))]
    if kind == "utf8":
        cut = draw(st.integers(0, len(valid)))
        return valid[:cut] + b"\xff\xfe" + valid[cut:]
    if kind == "schema":
        record = json.loads(valid)
        record["ts"] = draw(st.sampled_from(["yesterday", None, [], -5]))
        return json.dumps(record).encode()
    return b'{"ts":1,"type":"event","event":' + b"[" * draw(st.integers(101, 5000))


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[list[Message], list[Damage], bytes]:
    """A conversation, the damage to do to its file, and a torn tail (maybe empty)."""
    messages = draw(conversations())
    sample = json.dumps({"ts": 1, "type": "message", "message": messages[0].model_dump()})
    damage: list[Damage] = []
    for _ in range(draw(st.integers(1, 6))):
        position = draw(st.integers(1, len(messages)))
        line = None if draw(st.booleans()) else _garbage(sample.encode(), draw)
        damage.append(Damage(position, line, replace=line is not None and draw(st.booleans())))
    tail = draw(
        st.one_of(st.just(b""), st.builds(lambda n: sample.encode()[:n], st.integers(1, 40)))
    )
    return messages, damage, tail


def _apply(lines: list[bytes], damage: list[Damage]) -> list[tuple[bytes, bool]]:
    """The damaged file's lines, each with whether it holds a record that must still load."""
    entries = [(line, True) for line in lines]
    for change in damage:
        at = min(change.position, len(entries) - 1)
        if change.line is None:
            entries.insert(at, entries[at])
        elif _is_damage(change.line):
            if change.replace:
                entries[at] = (change.line, False)
            else:
                entries.insert(at, (change.line, False))
    return entries


@settings(max_examples=60, deadline=None)
@given(damaged_files())
def test_every_undamaged_record_loads_and_the_session_resumes(
    case: tuple[list[Message], list[Damage], bytes],
) -> None:
    messages, damage, tail = case
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp), redactor=Redactor({}), fsync=False)
        with store.create(cwd=Path(tmp), model_chain=["anthropic:x"]) as writer:
            for message in messages:
                writer.append_message(message)
        lines = writer.path.read_bytes().split(b"\n")[:-1]
        entries = _apply(lines, damage)
        writer.path.write_bytes(b"".join(line + b"\n" for line, _ in entries) + tail)
        expected = [m for line, good in entries if good and (m := _message(line)) is not None]
        bad = [line for line, good in entries if not good]

        assert store.load(writer.id).messages == expected
        loaded, reopened = store.open(writer.id)
        reopened.close()
        assert loaded.messages[: len(expected)] == expected
        assert history_problems(loaded.view) == []
        assert store.list()[0].id == writer.id
        aside = b"".join(path.read_bytes() for path in store.directory.glob("*.damaged-*"))
        assert aside.split(b"\n")[:-1] == bad

        again = store.load(writer.id)
        assert again.messages == loaded.messages
        assert again.warnings == []


def _message(line: bytes) -> Message | None:
    record = parse_record(line)
    return record.message if isinstance(record, MessageRecord) else None
