"""Whatever a session file holds, loading, listing and resuming never raise.

Each case is one hostile line in the middle of a good session: it is skipped (and set aside on
open), the records around it all load, and the listing still shows the session.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from providers import Message
from sessions import SessionError, SessionStore, history_problems
from sessions.listing import DAMAGED_HEADER_CWD
from sessions.records import (
    MAX_DEPTH,
    MAX_LINE_BYTES,
    MessageRecord,
    Unreadable,
    parse_record,
    too_deep,
)


def _message(text: str, **changes: object) -> bytes:
    record = {"ts": 5, "type": "message", "message": {"role": "user", "content": []}}
    record["message"]["content"] = [{"type": "text", "text": text}]  # type: ignore[index]
    return json.dumps(record | changes).encode()


HOSTILE: dict[str, bytes] = {
    "ts is a word": _message("x", ts="yesterday"),
    "ts is infinite": _message("x").replace(b'"ts": 5', b'"ts": 1e400'),
    "ts is far in the future": _message("x", ts=1e300),
    "ts is negative": _message("x", ts=-1),
    "nested 100k deep": b'{"ts":5,"type":"event","event":{"x":' + b"[" * 100_000,
    "nested 300 deep and closed": b'{"ts":5,"type":"event","event":{"x":'
    + b"[" * 300
    + b"]" * 300
    + b"}}",
    "bad UTF-8": _message("x").replace(b'"x"', b'"\xff\xfe"'),
    "NUL and garbage": b"\x00\x01garbage\x7f",
    "a JSON list": b"[1, 2, 3]",
    "a JSON string": b'"message"',
    "message is a list": json.dumps({"ts": 5, "type": "message", "message": []}).encode(),
    "content is a string": _message("x").replace(b'[{"type": "text", "text": "x"}]', b'"hi"'),
    "role is unknown": _message("x").replace(b'"user"', b'"system"'),
    "path with NUL": json.dumps(
        {"ts": 5, "type": "file_state", "path": "/tmp/a\u0000b", "exists": True}
    ).encode(),
    "mtime beyond 64 bits": json.dumps(
        {"ts": 5, "type": "file_state", "path": "/x", "exists": True, "mtime_ns": 10**400}
    ).encode(),
    "usage beyond 64 bits": json.dumps(
        {"ts": 5, "type": "usage", "usage": {"input_tokens": 10**30}}
    ).encode(),
    "turn status unknown": json.dumps({"ts": 5, "type": "turn_end", "status": "exploded"}).encode(),
    "a second header with a bad id": json.dumps(
        {"ts": 5, "type": "header", "id": "../../etc", "cwd": "/", "model_chain": []}
    ).encode(),
}


def _session(store: SessionStore, tmp_path: Path) -> tuple[str, Path]:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("before"))
        writer.append_message(Message.assistant("answer before"))
        writer.append_message(Message.user("after"))
        writer.append_message(Message.assistant("answer after"))
    return writer.id, writer.path


def _insert(path: Path, line: bytes, at: int = 3) -> None:
    lines = path.read_bytes().split(b"\n")
    lines.insert(at, line)
    path.write_bytes(b"\n".join(lines))


EXPECTED = [
    Message.user("before"),
    Message.assistant("answer before"),
    Message.user("after"),
    Message.assistant("answer after"),
]


@pytest.mark.parametrize("line", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_line_is_skipped_and_everything_else_loads(
    store: SessionStore, tmp_path: Path, line: bytes
) -> None:
    session_id, path = _session(store, tmp_path)
    good = path.read_bytes()
    _insert(path, line)

    assert isinstance(parse_record(line), Unreadable)
    loaded = store.load(session_id)
    assert loaded.messages == EXPECTED
    assert any("skipped 1 damaged line" in warning for warning in loaded.warnings)
    [summary] = store.list()  # a quick read: it may count a damaged message line
    assert (summary.id, summary.first_prompt) == (session_id, "before")

    reopened, writer = store.open(session_id)
    writer.close()
    assert reopened.messages == EXPECTED
    assert history_problems(reopened.view) == []
    [aside] = path.parent.glob(f"{session_id}.jsonl.damaged-*")
    assert aside.read_bytes() == line + b"\n"
    assert path.read_bytes() == good


@pytest.mark.parametrize("line", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_content_as_the_unfinished_last_line_is_cut(
    store: SessionStore, tmp_path: Path, line: bytes
) -> None:
    session_id, path = _session(store, tmp_path)
    good = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(line)  # no newline: what a crash in the middle of a write leaves

    assert store.load(session_id).messages == EXPECTED
    assert [s.id for s in store.list()] == [session_id]
    _, writer = store.open(session_id)
    writer.close()
    assert path.read_bytes() == good


def test_a_line_longer_than_the_limit_is_refused_before_parsing() -> None:
    huge = _message("a" * (MAX_LINE_BYTES + 1))
    result = parse_record(huge)
    assert isinstance(result, Unreadable)
    assert "longer than" in result.reason


def test_a_record_of_the_largest_depth_the_writer_allows_loads() -> None:
    def event(lists: int) -> bytes:  # the record and its event are two more levels
        return b'{"ts":5,"type":"event","event":{"x":' + b"[" * lists + b"]" * lists + b"}}"

    assert too_deep(event(MAX_DEPTH - 1))
    assert not too_deep(event(MAX_DEPTH - 2))
    assert not isinstance(parse_record(event(MAX_DEPTH - 2)), Unreadable)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = "{[" * (MAX_DEPTH * 3) + '"]'
    record = parse_record(_message(text))
    assert isinstance(record, MessageRecord)
    assert record.message == Message.user(text)


def test_a_damaged_header_is_rebuilt_and_the_conversation_resumes_here(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id, path = _session(store, tmp_path)
    lines = path.read_bytes().split(b"\n")
    original = lines[0]
    lines[0] = lines[0].replace(b'"cwd":"', b'"cwd":"\\u0000')
    path.write_bytes(b"\n".join(lines))
    here = tmp_path / "resumed-from"
    here.mkdir()
    monkeypatch.chdir(here)
    [listed] = store.list()  # listed before it is resumed, so the person can find it
    assert (listed.id, listed.cwd, listed.message_count) == (session_id, DAMAGED_HEADER_CWD, 4)

    loaded, writer = store.open(session_id)
    writer.append_message(Message.user("one more"))
    writer.close()

    assert loaded.header.id == session_id
    assert loaded.header.cwd == str(here)
    assert [m.text for m in loaded.messages] == ["before", "answer before", "after", "answer after"]
    assert any("header line was damaged and has been rebuilt" in w for w in loaded.warnings)
    [aside] = path.parent.glob(f"{path.name}.damaged-*")
    assert aside.read_bytes() == lines[0] + b"\n"  # the bad line is kept, not thrown away
    first = json.loads(path.read_bytes().split(b"\n")[0])  # the file is whole again
    assert (first["type"], first["id"], first["cwd"]) == ("header", session_id, str(here))
    assert json.loads(original)["ts"] <= first["ts"]
    again = store.load(session_id)
    assert again.warnings == []
    assert [m.text for m in again.messages][-1] == "one more"
    assert [s.id for s in store.list()] == [session_id]


def test_a_file_whose_first_line_is_damaged_and_nothing_else_survives_is_no_session(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path)
    path.write_bytes(b'{"type":"header","id":\n')

    with pytest.raises(SessionError, match=r"header line of session file .* is damaged"):
        store.open(session_id)
    assert path.read_bytes() == b'{"type":"header","id":\n'


def test_a_line_within_the_limit_in_characters_but_not_in_bytes_is_refused_when_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = 4096  # the reader's bound, in bytes, made small enough to reach
    monkeypatch.setattr("sessions.writer.MAX_LINE_BYTES", limit)
    monkeypatch.setattr("sessions.records.MAX_LINE_BYTES", limit)
    store = SessionStore(tmp_path / "home")
    text = "é" * (limit // 2)  # fewer characters than the limit, twice as many bytes
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("kept"))
        with pytest.raises(SessionError, match="larger than 4096 bytes"):
            writer.append_message(Message.user(text))
        session_id = writer.id

    # Nothing was written that the reader would refuse: the session reads back whole.
    loaded = store.load(session_id)
    assert loaded.messages == [Message.user("kept")]
    assert loaded.warnings == []


def test_a_damaged_file_state_in_a_result_line_is_left_out_and_the_message_kept(
    store: SessionStore, tmp_path: Path
) -> None:
    kept = tmp_path / "kept.py"
    kept.write_text("kept")
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("read kept.py"))
    result = {
        "ts": 5,
        "type": "message",
        "message": {"role": "user", "content": [{"type": "text", "text": "read"}]},
        "files": [
            {"path": "/tmp/a\u0000b", "exists": True},
            {"path": str(kept), "exists": True, "size": 1, "mtime_ns": 10**400},
            {"path": str(kept), "exists": False},
            "not a file state",
        ],
    }
    with writer.path.open("ab") as handle:
        handle.write(json.dumps(result).encode() + b"\n")

    loaded = store.load(writer.id)

    assert loaded.messages == [Message.user("read kept.py"), Message.user("read")]
    assert loaded.warnings == []
    # The one good state (the file did not exist then) is what the resume compares with.
    assert [(c.path, c.change) for c in loaded.changed_files] == [(str(kept), "created")]
