"""The session records (and hashes) only regular files inside its workspace."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

from providers import Message, ToolResultBlock, ToolUseBlock
from sessions import SessionStore
from sessions.files import content_hash, snapshot, tool_path
from tools import file_in_workspace


def _file_states(store: SessionStore, cwd: Path, paths: list[str]) -> list[dict[str, object]]:
    """Run read_file on each path in a session; return the file states its results carry."""
    with store.create(cwd=cwd, model_chain=[]) as writer:
        writer.append_message(Message.user("read"))
        calls = [
            ToolUseBlock(id=f"t{n}", name="read_file", input={"path": path})
            for n, path in enumerate(paths)
        ]
        writer.append_message(Message(role="assistant", content=list(calls)))
        results = [ToolResultBlock(tool_use_id=c.id, content="x", is_error=True) for c in calls]
        writer.append_message(Message(role="user", content=list(results)))
    return _seen_files(writer.path)


def _seen_files(path: Path) -> list[dict[str, object]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [seen for record in records for seen in record.get("files", [])]


def test_refused_outside_paths_are_neither_hashed_nor_recorded(
    store: SessionStore, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("private")
    os.symlink(outside, workspace / "link.txt")

    states = _file_states(
        store, workspace, ["/dev/zero", str(outside), "../outside.txt", "link.txt", "a\x00b"]
    )

    assert states == []


def test_a_fifo_in_the_workspace_is_recorded_without_reading_it(
    store: SessionStore, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.mkfifo(workspace / "pipe")
    (workspace / "ok.txt").write_text("fine")

    states = _file_states(store, workspace, ["pipe", "ok.txt"])

    pipe, ok = states
    assert pipe["path"] == str(workspace.resolve() / "pipe")
    assert pipe["exists"] is True
    assert (pipe.get("sha256"), pipe.get("size")) == (None, None)
    assert ok["sha256"] == content_hash(workspace / "ok.txt")
    assert ok["size"] == 4


def test_hashing_refuses_devices_and_fifos(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert content_hash(tmp_path / "pipe") is None
    assert content_hash(Path("/dev/zero")) is None  # only stat and open: never read
    assert snapshot(Path("/dev/zero")).sha256 is None
    assert tool_path(tmp_path, "write_file", {"path": "a\x00b"}) is None


def test_with_the_tools_resolution_the_same_files_are_recorded(tmp_path: Path) -> None:
    # The agent hands the session the tools' own path resolution (`resolve_path`): refused
    # paths stay unrecorded, a link inside the workspace is recorded as its target.
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("a = 1\n")
    os.symlink(workspace / "src" / "a.py", workspace / "alias.py")
    outside = tmp_path / "outside.txt"
    outside.write_text("private")
    os.symlink(outside, workspace / "link.txt")

    store = SessionStore(tmp_path / "home", resolve_path=partial(file_in_workspace, workspace))
    paths = ["src/a.py", "alias.py", "new/b.py", str(outside), "../outside.txt", "link.txt"]
    states = _file_states(store, workspace, paths)

    target = str(workspace.resolve() / "src" / "a.py")
    assert [state["path"] for state in states] == [
        target,
        target,
        str(workspace.resolve() / "new" / "b.py"),
    ]
    assert states[0]["sha256"] == content_hash(workspace / "src" / "a.py")
    assert states[2]["exists"] is False


def test_the_state_recorded_is_of_the_file_the_link_names_when_the_result_arrives(
    store: SessionStore, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "before.txt").write_text("before")
    (workspace / "after.txt").write_text("after, as the tool read it")
    os.symlink("before.txt", workspace / "link.txt")
    with store.create(cwd=workspace, model_chain=[]) as writer:
        call = ToolUseBlock(id="t1", name="read_file", input={"path": "link.txt"})
        writer.append_message(Message(role="assistant", content=[call]))
        # The link moves while the call waits for approval; the tool then reads the new target.
        (workspace / "link.txt").unlink()
        os.symlink("after.txt", workspace / "link.txt")
        result = ToolResultBlock(tool_use_id="t1", content="after, as the tool read it")
        writer.append_message(Message(role="user", content=[result]))
    [state] = _seen_files(writer.path)
    assert state["path"] == str(workspace.resolve() / "after.txt")
    assert state["sha256"] == content_hash(workspace / "after.txt")
