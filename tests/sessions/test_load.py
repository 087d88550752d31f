"""Loading damaged files: every valid record, damaged lines set aside, never a crash."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from providers import Message, ToolResultBlock, ToolUseBlock
from providers.conversation import is_interrupted_result
from sessions import SessionError, SessionStore, history_problems


def _session(store: SessionStore, tmp_path: Path, prompts: int) -> tuple[str, Path]:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        for number in range(prompts):
            writer.append_message(Message.user(f"prompt {number}"))
            writer.append_message(Message.assistant(f"answer {number}"))
    return writer.id, writer.path


def test_a_torn_last_line_is_dropped_with_a_warning(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path, 3)
    with path.open("ab") as handle:
        handle.write(b'{"ts":1,"type":"message","message":{"role":"user","con')

    loaded = store.load(session_id)

    assert len(loaded.messages) == 6
    assert any("incomplete last line" in warning for warning in loaded.warnings)


def test_appends_after_a_torn_line_are_not_lost(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path, 1)
    with path.open("ab") as handle:
        handle.write(b'{"ts":1,"type":"mess')

    _, writer = store.open(session_id)
    with writer:
        writer.append_message(Message.user("after the crash"))

    loaded = store.load(session_id)
    assert loaded.messages[-1] == Message.user("after the crash")
    assert loaded.warnings == []


def test_a_damaged_middle_line_is_skipped_and_every_other_record_loads(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path, 5)
    lines = path.read_bytes().split(b"\n")
    lines[4] = lines[4][:10] + b"\x00garbage\xff" + lines[4][10:]
    path.write_bytes(b"\n".join(lines))

    loaded = store.load(session_id)

    assert len(loaded.messages) == 9
    assert Message.assistant("answer 1") not in loaded.messages
    assert Message.user("prompt 4") in loaded.messages
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith("skipped 1 damaged line of the session file (5: ")
    assert loaded.warnings[0].endswith("all 9 valid records were loaded")
    assert path.read_bytes() == b"\n".join(lines)  # loading never changes the file


def test_opening_a_damaged_file_sets_the_bad_lines_aside_and_keeps_the_rest(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path, 3)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"{not json"
    lines[5] = b"\xff\xfe not utf-8"
    path.write_bytes(b"\n".join(lines))

    loaded, writer = store.open(session_id)
    with writer:
        writer.append_message(Message.user("continue"))

    assert any("moved to" in warning for warning in loaded.warnings)
    copies = list(path.parent.glob(f"{session_id}.jsonl.damaged-*"))
    assert len(copies) == 1
    assert copies[0].read_bytes() == b"{not json\n\xff\xfe not utf-8\n"
    assert copies[0].stat().st_mode & 0o777 == 0o600
    assert path.stat().st_mode & 0o777 == 0o600
    reloaded = store.load(session_id)
    assert reloaded.messages == [
        Message.user("prompt 0"),
        Message.user("prompt 1"),
        Message.assistant("answer 1"),
        Message.assistant("answer 2"),
        Message.user("continue"),
    ]
    assert reloaded.warnings == []


def test_records_of_unknown_type_are_skipped(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path, 1)
    with path.open("ab") as handle:
        handle.write(json.dumps({"ts": 5, "type": "hologram", "x": 1}).encode() + b"\n")
        handle.write(json.dumps({"ts": 6, "type": "turn_end", "status": "done"}).encode() + b"\n")

    loaded = store.load(session_id)

    assert [t.status for t in loaded.turn_ends] == ["done"]
    assert loaded.warnings == ["skipped line 4: unknown record type 'hologram'"]


def test_a_file_from_a_newer_version_is_refused_clearly(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path, 1)
    header, rest = path.read_bytes().split(b"\n", 1)
    newer = json.loads(header) | {"format": 99}
    path.write_bytes(json.dumps(newer).encode() + b"\n" + rest)
    with pytest.raises(SessionError, match="newer version"):
        store.load(session_id)


@pytest.mark.parametrize("content", [b"", b"\x00\x00\x00", b'{"ts":1,"type":"message"}\n'])
def test_a_file_without_a_header_is_an_error_not_a_crash(
    store: SessionStore, tmp_path: Path, content: bytes
) -> None:
    session_id, path = _session(store, tmp_path, 1)
    path.write_bytes(content)
    with pytest.raises(SessionError):
        store.load(session_id)
    assert store.list() == []


def test_a_dangling_tool_call_is_answered_and_saved_on_open(
    store: SessionStore, tmp_path: Path
) -> None:
    call = ToolUseBlock(id="t9", name="run_command", input={"command": "make"})
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("build it"))
        writer.append_message(Message(role="assistant", content=[call]))

    loaded, session = store.open(writer.id)
    session.close()

    assert loaded.ends_with_user_message
    result = loaded.view[-1].tool_results[0]
    assert result.is_error
    assert result.tool_use_id == "t9"
    assert is_interrupted_result(result)
    assert history_problems(loaded.view) == []
    reloaded = store.load(writer.id)
    assert reloaded.messages == loaded.view
    assert reloaded.repairs == []


def test_a_session_ending_on_a_prompt_is_answered_on_resume(
    store: SessionStore, tmp_path: Path
) -> None:
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user("first"))
        writer.append_message(Message.assistant("one"))
        writer.append_message(Message.user("second"))
    loaded = store.load(writer.id)
    assert loaded.ends_with_user_message
    assert loaded.last_exchange() == [Message.user("second")]


def test_the_last_exchange_comes_from_the_history_not_the_compacted_view(
    store: SessionStore, tmp_path: Path
) -> None:
    summary = Message.user("[Context compacted: the earlier conversation was replaced ...]")
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user("fix the failing test"))
        call = ToolUseBlock(id="t1", name="list_files", input={})
        writer.append_message(Message(role="assistant", content=[call]))
        writer.append_compaction([summary, Message(role="assistant", content=[call])], {})
        writer.append_message(
            Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="a.py")])
        )
        writer.append_message(Message.assistant("Fixed."))

    loaded = store.load(writer.id)

    assert loaded.view[0] == summary
    exchange = loaded.last_exchange()
    assert exchange[0] == Message.user("fix the failing test")
    assert exchange[-1] == Message.assistant("Fixed.")
    assert all(message != summary for message in exchange)


def test_resuming_exempts_the_session_from_the_collector_and_turns_it_back_on(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, _ = _session(store, tmp_path, prompts=3)
    frozen = gc.get_freeze_count()
    try:
        loaded, writer = store.open(session_id)
        writer.close()
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # later full collections skip the session
        assert len(loaded.messages) == 6

        frozen = gc.get_freeze_count()
        store.load(session_id)  # reading only, the same
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()


def test_a_failed_load_turns_the_collector_back_on(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path, prompts=1)
    path.write_bytes(b"not a session\n")

    with pytest.raises(SessionError):
        store.open(session_id)
    with pytest.raises(SessionError):
        store.load(session_id)

    assert gc.isenabled()
