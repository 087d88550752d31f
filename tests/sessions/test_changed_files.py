"""Files changed on disk since the session last touched them are reported on resume."""

from __future__ import annotations

import os
from pathlib import Path

from providers import Message, ToolResultBlock, ToolUseBlock
from sessions import FileChange, SessionStore


def _touch_with_tool(store: SessionStore, cwd: Path, names: dict[str, str]) -> str:
    """A session where each tool in ``names`` (id → file) ran to completion."""
    with store.create(cwd=cwd, model_chain=[]) as writer:
        writer.append_message(Message.user("work"))
        calls = [
            ToolUseBlock(id=f"t{n}", name=tool, input={"path": path})
            for n, (path, tool) in enumerate(names.items())
        ]
        writer.append_message(Message(role="assistant", content=list(calls)))
        results = [ToolResultBlock(tool_use_id=call.id, content="ok") for call in calls]
        writer.append_message(Message(role="user", content=list(results)))
        writer.append_message(Message.assistant("done"))
    return writer.id


def test_modified_deleted_and_created_files_are_listed(store: SessionStore, tmp_path: Path) -> None:
    (tmp_path / "edited.py").write_text("one")
    (tmp_path / "same.py").write_text("same")
    (tmp_path / "gone.py").write_text("bye")
    (tmp_path / "touched.py").write_text("content")
    session_id = _touch_with_tool(
        store,
        tmp_path,
        {
            "edited.py": "edit_file",
            "same.py": "read_file",
            "gone.py": "read_file",
            "new.py": "read_file",
            "touched.py": "read_file",
            "ignored.py": "run_command",
        },
    )
    (tmp_path / "edited.py").write_text("two")
    (tmp_path / "gone.py").unlink()
    (tmp_path / "new.py").write_text("appeared")
    (tmp_path / "ignored.py").write_text("not tracked")
    os.utime(tmp_path / "touched.py", ns=(1, 1))  # a new mtime, same content

    loaded = store.load(session_id)

    assert loaded.changed_files == [
        FileChange(str(tmp_path / "edited.py"), "modified"),
        FileChange(str(tmp_path / "gone.py"), "deleted"),
        FileChange(str(tmp_path / "new.py"), "created"),
    ]
    note = loaded.changed_files_note
    assert note is not None
    assert f"{tmp_path / 'edited.py'} (modified)" in note


def test_nothing_changed_means_no_note(store: SessionStore, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a")
    session_id = _touch_with_tool(store, tmp_path, {"a.py": "write_file"})
    loaded = store.load(session_id)
    assert loaded.changed_files == []
    assert loaded.changed_files_note is None


def test_an_interrupted_write_is_flagged_from_its_checkpoint(
    store: SessionStore, tmp_path: Path
) -> None:
    import hashlib

    target = tmp_path / "half.py"
    target.write_text("before")
    before = hashlib.sha256(b"before").hexdigest()
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_checkpoint(Path("half.py"), existed_before=True, content_hash=before, turn=1)
    assert store.load(writer.id).changed_files == []
    target.write_text("after")  # the write happened, but its result was never recorded
    assert store.load(writer.id).changed_files == [FileChange(str(target), "modified")]


def test_large_files_are_compared_by_size_and_mtime(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "home", hash_limit=4)
    big = tmp_path / "big.bin"
    big.write_bytes(b"0123456789")
    session_id = _touch_with_tool(store, tmp_path, {"big.bin": "read_file"})
    assert store.load(session_id).changed_files == []
    big.write_bytes(b"abcdefghij")
    os.utime(big, ns=(5, 5))
    assert store.load(session_id).changed_files == [FileChange(str(big), "modified")]


def test_file_states_on_lines_of_their_own_still_count(store: SessionStore, tmp_path: Path) -> None:
    # Files written before tool results carried their file states keep them as
    # ``file_state`` lines; a resume compares those the same way.
    import hashlib
    import json

    kept, changed = tmp_path / "kept.py", tmp_path / "changed.py"
    kept.write_text("kept")
    changed.write_text("before")
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user("work"))
    with writer.path.open("a") as old_lines:
        for path in (kept, changed):
            info = path.stat()
            state = {
                "ts": 5,
                "type": "file_state",
                "path": str(path),
                "exists": True,
                "size": info.st_size,
                "mtime_ns": info.st_mtime_ns,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            }
            old_lines.write(json.dumps(state) + "\n")
    changed.write_text("after!")

    assert store.load(writer.id).changed_files == [FileChange(str(changed), "modified")]


def test_a_later_checkpoint_of_a_file_replaces_the_state_a_result_carried(
    store: SessionStore, tmp_path: Path
) -> None:
    # The last word on a file wins, whichever kind of line it is on.
    target = tmp_path / "a.py"
    target.write_text("read")
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        call = ToolUseBlock(id="t1", name="read_file", input={"path": "a.py"})
        writer.append_message(Message(role="assistant", content=[call]))
        writer.append_message(
            Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="read")])
        )
        writer.append_checkpoint(Path("a.py"), existed_before=True, content_hash="0" * 64, turn=1)
    # The checkpoint's hash is not the file's: the write it announced may have happened.
    assert store.load(writer.id).changed_files == [FileChange(str(target), "modified")]
