"""Checkpoints, /undo and rollback of a call that fails part way."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from tests.tools.conftest import Harness, MakeHarness
from tools import Tool, ToolContext, ToolError, ToolOutput
from tools.checkpoints import CheckpointStore


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
            path.mkdir()  # restoring a file over a directory fails
            raise ToolError("step 2 failed")

    harness = make_harness(tools=[BreaksItsOwnUndo()])
    result = await harness.run("two_writes")
    assert "ROLLBACK FAILED" in result.content
    assert "a.txt" in result.content
    [event] = harness.of_type("rolled_back")
    assert event.model_dump()["failed"]


def test_store_on_disk_keeps_content_in_the_given_directory(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "checkpoints")
    target = tmp_path / "f.txt"
    target.write_bytes(b"\x00binary\xff")
    store.record(target, turn=1, tool_use_id="t1")
    assert len(list((tmp_path / "checkpoints").iterdir())) == 1
    target.write_text("changed")
    report = store.undo_turn()
    assert target.read_bytes() == b"\x00binary\xff"
    assert report.describe() == "Restored 1 file(s)."
    assert list((tmp_path / "checkpoints").iterdir()) == []


async def test_writing_over_a_directory_fails_cleanly(harness: Harness, workspace: Path) -> None:
    (workspace / "d").mkdir()
    result = await harness.run("write_file", path="d", content="x")
    assert result.is_error
    assert "d is a directory" in result.content
    assert "ROLLBACK" not in result.content
    assert harness.executor.checkpoints == []
    assert (workspace / "d").is_dir()
