"""Checkpoints, /undo and rollback of a call that fails part way."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from pydantic import BaseModel

from providers.messages import ToolUseBlock
from tests.tools.conftest import Harness, MakeHarness
from tools import Tool, ToolContext, ToolError, ToolOutput, builtin_tools
from tools.undo.checkpoints import CheckpointStore


class TwoWritesInput(BaseModel):
    fail_after_first: bool = True


class TwoWrites(Tool[TwoWritesInput]):
    """A multi-step tool: writes a.txt, then b.txt, failing in between when asked."""

    name = "two_writes"
    description = "test tool"
    input_model = TwoWritesInput
    kind = "edit"

    async def run(self, args: TwoWritesInput, ctx: ToolContext) -> ToolOutput:
        for name in ("a.txt", "b.txt"):
            path = ctx.resolve(name)
            ctx.record_checkpoint(path)
            path.write_text("new")
            if args.fail_after_first:
                raise ToolError("disk full while writing b.txt")
        return ToolOutput("done")


async def test_undo_restores_the_last_turn_lifo(harness: Harness, workspace: Path) -> None:
    target = workspace / "f.txt"
    target.write_text("v0")
    await harness.run("write_file", path="f.txt", content="v1")
    harness.executor.begin_turn()
    await harness.run("write_file", path="f.txt", content="v2")
    await harness.run("edit_file", path="f.txt", old_string="v2", new_string="v3")
    await harness.run("write_file", path="new/created.txt", content="x")
    assert target.read_text() == "v3"

    report = harness.executor.undo_last_turn()
    assert report.ok
    assert target.read_text() == "v1"
    assert not (workspace / "new" / "created.txt").exists()
    assert [p.name for p in report.restored] == ["created.txt", "f.txt"]

    assert harness.executor.undo_last_turn().restored == [target.resolve()]
    assert target.read_text() == "v0"
    assert harness.executor.undo_last_turn().turn is None
    assert [e.type for e in harness.of_type("undo_applied")] == ["undo_applied"] * 2


async def test_checkpoint_metadata_and_events(harness: Harness, workspace: Path) -> None:
    (workspace / "old.txt").write_text("x")
    await harness.run("write_file", path="old.txt", content="y")
    await harness.run("write_file", path="fresh.txt", content="y")
    meta = [(c.path.name, c.existed_before, c.turn) for c in harness.executor.checkpoints]
    assert meta == [("old.txt", True, 1), ("fresh.txt", False, 1)]
    recorded = harness.of_type("checkpoint_recorded")
    assert [e.model_dump()["existed_before"] for e in recorded] == [True, False]


async def test_failed_multi_step_call_is_rolled_back(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("original a")
    harness = make_harness(tools=[TwoWrites()])
    result = await harness.run("two_writes")
    assert result.is_error
    assert "disk full" in result.content
    assert "rolled back: a.txt" in result.content
    assert (workspace / "a.txt").read_text() == "original a"
    assert harness.executor.checkpoints == []
    assert harness.of_type("rolled_back")


async def test_a_failing_rollback_is_reported(make_harness: MakeHarness, workspace: Path) -> None:
    (workspace / "a.txt").write_text("original a")

    class BreaksItsOwnUndo(TwoWrites):
        async def run(self, args: TwoWritesInput, ctx: ToolContext) -> ToolOutput:
            path = ctx.resolve("a.txt")
            ctx.record_checkpoint(path)
            path.unlink()
            path.mkdir()  # restoring a file over a non-empty directory fails
            (path / "inside.txt").write_text("x")
            raise ToolError("step 2 failed")

    harness = make_harness(tools=[BreaksItsOwnUndo()])
    result = await harness.run("two_writes")
    assert "ROLLBACK FAILED" in result.content
    assert "a.txt" in result.content
    [event] = harness.of_type("rolled_back")
    assert event.model_dump()["failed"]


def test_store_on_disk_is_private_and_survives_a_restart(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    directory = tmp_path / "checkpoints" / "session"
    target = workspace / "f.txt"
    target.write_bytes(b"\x00binary\xff")
    CheckpointStore(workspace, directory).record(target, turn=1, tool_use_id="t1", call=1)
    assert _mode(directory) == 0o700
    files = [p for p in directory.rglob("*") if p.is_file()]
    assert files
    assert all(_mode(p) == 0o600 for p in files)
    target.write_text("changed")  # not sealed: the agent's result is unknown (a crash)

    restarted = CheckpointStore(workspace, directory)
    [entry] = restarted.entries
    meta = (entry.rel, entry.existed_before, entry.turn, entry.tool_use_id)
    assert meta == ("f.txt", True, 1, "t1")
    report = restarted.roll_back_call(1)
    assert target.read_bytes() == b"\x00binary\xff"
    assert report.describe(workspace) == "Undid turn 1: 1 file put back.\n  f.txt: restored"
    assert CheckpointStore(workspace, directory).entries == []


def test_a_damaged_index_line_is_skipped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    directory = tmp_path / "cp"
    store = CheckpointStore(workspace, directory)
    store.record(workspace / "a.txt", turn=1, tool_use_id="t1", call=1)
    with (directory / "index.jsonl").open("a") as index:
        index.write('garbage\n{"op": "add", "id": "x"}\n{"op":"add","id":9,"path":"../out"}\n')
    store.record(workspace / "b.txt", turn=1, tool_use_id="t2", call=2)
    assert [c.rel for c in CheckpointStore(workspace, directory).entries] == ["a.txt", "b.txt"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_writing_over_a_directory_fails_cleanly(harness: Harness, workspace: Path) -> None:
    (workspace / "d").mkdir()
    result = await harness.run("write_file", path="d", content="x")
    assert result.is_error
    assert "d is a directory" in result.content
    assert "ROLLBACK" not in result.content
    assert harness.executor.checkpoints == []
    assert (workspace / "d").is_dir()


async def test_undo_never_follows_a_directory_replaced_by_a_symlink(
    harness: Harness, workspace: Path, decoy_home: Path
) -> None:
    canary = decoy_home / "CANARY"
    await harness.run("write_file", path="cache/CANARY", content=canary.read_text())
    # The person (or anything else) swaps the directory for a link to the decoy home.
    shutil.rmtree(workspace / "cache")
    (workspace / "cache").symlink_to(decoy_home)

    report = harness.executor.undo_last_turn()

    assert canary.read_text() == "do not delete"
    assert not report.ok
    [failure] = report.failed
    assert failure.path == workspace / "cache" / "CANARY"
    assert "cache is now a symlink" in failure.reason
    assert "Could not restore" in report.describe()


async def test_restoring_an_old_version_never_writes_through_a_symlinked_directory(
    harness: Harness, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("v0")
    await harness.run("write_file", path="sub/f.txt", content="v1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("v1")  # same content as the agent left: the hash matches
    shutil.rmtree(workspace / "sub")
    (workspace / "sub").symlink_to(outside)

    report = harness.executor.undo_last_turn()

    assert (outside / "f.txt").read_text() == "v1"
    assert [f.path.name for f in report.failed] == ["f.txt"]


async def test_a_file_the_person_changed_after_the_agent_created_it_is_kept(
    harness: Harness, workspace: Path
) -> None:
    notes = workspace / "notes.md"
    await harness.run("write_file", path="notes.md", content="# Notes\n")
    with notes.open("a") as handle:
        handle.write("My own paragraph.\n")

    report = harness.executor.undo_last_turn()

    assert notes.read_text() == "# Notes\nMy own paragraph.\n"
    assert report.restored == []
    [kept] = report.kept
    assert kept.path == notes
    assert kept.saved_as is None
    assert "Left" in report.describe()
    assert "notes.md" in report.describe()
    [event] = harness.of_type("undo_applied")
    assert event.model_dump()["kept"]


async def test_a_file_the_person_changed_after_an_edit_gets_the_old_version_beside_it(
    harness: Harness, workspace: Path
) -> None:
    notes = workspace / "notes.md"
    notes.write_text("v0\n")
    (workspace / "notes.md.undo").write_text("an unrelated file")
    await harness.run("edit_file", path="notes.md", old_string="v0", new_string="v1")
    await harness.run("write_file", path="other.txt", content="agent")
    notes.write_text("v1\nperson's line\n")

    report = harness.executor.undo_last_turn()

    assert notes.read_text() == "v1\nperson's line\n"
    assert (workspace / "notes.md.undo").read_text() == "an unrelated file"
    assert (workspace / "notes.md.undo-2").read_text() == "v0\n"
    assert not (workspace / "other.txt").exists()
    assert report.restored == [workspace / "other.txt"]
    [kept] = report.kept
    assert kept.saved_as == workspace / "notes.md.undo-2"
    assert "notes.md.undo-2" in report.describe()


async def test_a_file_deleted_since_is_not_recreated_but_saved_beside(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("v0")
    await harness.run("write_file", path="a.txt", content="v1")
    (workspace / "a.txt").unlink()

    report = harness.executor.undo_last_turn()

    assert not (workspace / "a.txt").exists()
    assert (workspace / "a.txt.undo").read_text() == "v0"
    assert "deleted since" in report.kept[0].reason


async def test_same_tool_call_id_twice_rolls_back_only_its_own_call(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("original a")
    harness = make_harness(tools=[*builtin_tools(), TwoWrites()])
    first = ToolUseBlock(id="dup", name="write_file", input={"path": "b.txt", "content": "first"})
    second = ToolUseBlock(id="dup", name="two_writes", input={})

    assert not (await harness.executor.execute(first)).is_error
    result = await harness.executor.execute(second)

    assert "ROLLBACK FAILED" not in result.content
    assert (workspace / "a.txt").read_text() == "original a"
    assert (workspace / "b.txt").read_text() == "first"  # the other call is untouched
    report = harness.executor.undo_last_turn()
    assert report.ok
    assert not (workspace / "b.txt").exists()


def test_a_saved_copy_is_durable_before_a_checkpoint_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, directory = tmp_path / "work", tmp_path / "checkpoints"
    workspace.mkdir()
    (workspace / "a.py").write_text("precious\n")
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the OS edge: which files reach the disk, in which order
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = CheckpointStore(workspace, directory)

    [checkpoint] = [store.record(workspace / "a.py", turn=1, tool_use_id="t", call=1)]

    assert checkpoint.before is not None
    blob = str((directory / "blobs" / checkpoint.before.digest).resolve())
    index = str((directory / "index.jsonl").resolve())
    assert synced.index(blob) < synced.index(str((directory / "blobs").resolve()))
    assert synced.index(str((directory / "blobs").resolve())) < synced.index(index)
    synced.clear()
    store.record(workspace / "a.py", turn=2, tool_use_id="u", call=2)  # same content
    assert synced == [index]  # an already durable copy is not synced again
