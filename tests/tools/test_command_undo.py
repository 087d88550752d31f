"""/undo of what run_command changed: workspace snapshots around each command."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
from pathlib import Path

import pytest

from providers import ToolResultBlock, ToolUseBlock
from tests.tools.conftest import Harness, MakeHarness, call
from tools import ToolSettings
from tools.ignore import GitIgnore
from tools.undo.checkpoint_files import BlobStore, prune_checkpoints
from tools.undo.checkpoints import CheckpointStore
from tools.undo.command_changes import CommandRecorder
from tools.undo.snapshots import Snapshot, SnapshotLimits, WorkspaceScanner


async def test_undo_restores_deleted_moved_appended_and_created_files(
    harness: Harness, workspace: Path
) -> None:
    for name, text in {"a.txt": "a\n", "b.txt": "b\n", "d.txt": "d\n"}.items():
        (workspace / name).write_text(text)
    (workspace / "tool.sh").write_text("#!/bin/sh\n")
    (workspace / "tool.sh").chmod(0o755)
    result = await harness.run(
        "run_command",
        command="rm a.txt && mv b.txt c.txt && echo more >> d.txt && mkdir -p n && echo e > n/e.txt"
        " && chmod 600 tool.sh",
    )
    assert not result.is_error, result.content

    report = harness.executor.undo_last_turn()

    assert report.ok, report.describe()
    assert (workspace / "a.txt").read_text() == "a\n"
    assert (workspace / "b.txt").read_text() == "b\n"
    assert (workspace / "d.txt").read_text() == "d\n"
    assert not (workspace / "c.txt").exists()
    assert not (workspace / "n" / "e.txt").exists()
    assert stat.S_IMODE((workspace / "tool.sh").stat().st_mode) == 0o755
    assert len(report.restored) == 6


async def test_rm_and_symlink_to_home_then_undo_leaves_the_home_alone(
    harness: Harness, workspace: Path, decoy_home: Path
) -> None:
    canary = decoy_home / "CANARY"
    await harness.run("write_file", path="cache/CANARY", content=canary.read_text())
    result = await harness.run("run_command", command=f"rm -rf cache && ln -s {decoy_home} cache")
    assert not result.is_error, result.content
    assert (workspace / "cache").is_symlink()

    report = harness.executor.undo_last_turn()

    assert canary.read_text() == "do not delete"
    assert report.ok, report.describe()
    assert not (workspace / "cache").exists()
    assert not (workspace / "cache").is_symlink()


async def test_a_deleted_symlink_comes_back_as_a_link_and_is_never_followed(
    make_harness: MakeHarness, workspace: Path, decoy_home: Path, tmp_path: Path
) -> None:
    (workspace / "home").symlink_to(decoy_home)
    harness = make_harness(checkpoint_dir=tmp_path / "cp")
    await harness.run("run_command", command="rm home")
    blobs = list((tmp_path / "cp" / "blobs").iterdir())
    assert all(b"do not delete" not in blob.read_bytes() for blob in blobs)

    assert harness.executor.undo_last_turn().ok
    assert (workspace / "home").is_symlink()
    assert (workspace / "home").readlink() == decoy_home


async def test_files_the_person_changed_after_the_command_are_kept(
    harness: Harness, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("v0\n")
    await harness.run("run_command", command="echo agent >> notes.md")
    with (workspace / "notes.md").open("a") as handle:
        handle.write("person\n")

    report = harness.executor.undo_last_turn()

    assert (workspace / "notes.md").read_text() == "v0\nagent\nperson\n"
    assert (workspace / "notes.md.undo").read_text() == "v0\n"
    assert report.kept


async def test_ignored_files_are_not_snapshotted_or_restored(
    harness: Harness, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("old")
    await harness.run("run_command", command="echo new > build/out.o && echo '*' >> .gitignore")

    report = harness.executor.undo_last_turn()

    assert report.ok
    assert report.restored == [workspace / ".gitignore"]
    assert (workspace / ".gitignore").read_text() == "build/\n"
    assert (workspace / "build" / "out.o").read_text() == "new\n"


async def test_files_over_the_size_limit_are_reported_as_not_undoable(
    make_harness: MakeHarness, workspace: Path
) -> None:
    (workspace / "big.bin").write_bytes(b"x" * 2048)
    (workspace / "small.txt").write_text("s")
    harness = make_harness(settings=ToolSettings(snapshot_max_file_bytes=1024))
    result = await harness.run("run_command", command="echo y >> big.bin && echo t > small.txt")

    assert "/undo cannot restore 1 changed file(s)" in result.content
    assert "big.bin" in result.content
    assert harness.executor.undo_last_turn().restored == [workspace / "small.txt"]
    assert (workspace / "small.txt").read_text() == "s"


async def test_command_changes_undo_after_a_restart(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "keep.txt").write_text("keep\n")
    directory = tmp_path / "checkpoints" / "session-1"
    first = make_harness(checkpoint_dir=directory)
    await first.run("run_command", command="rm keep.txt && echo x > made.txt")

    resumed = make_harness(checkpoint_dir=directory)
    report = resumed.executor.undo_last_turn()

    assert report.ok
    assert report.turn == 1
    assert (workspace / "keep.txt").read_text() == "keep\n"
    assert not (workspace / "made.txt").exists()
    assert resumed.executor.undo_last_turn().turn is None
    stored = [p for p in directory.rglob("*") if p.is_file()]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in stored)


async def test_a_second_command_in_an_unchanged_workspace_reads_no_file_again(
    make_harness: MakeHarness, workspace: Path, tmp_path: Path
) -> None:
    for n in range(50):
        (workspace / f"f{n}.txt").write_text(f"{n}\n")
    harness = make_harness(checkpoint_dir=tmp_path / "cp")
    await harness.run("run_command", command="true")
    blobs = tmp_path / "cp" / "blobs"
    times = {p.name: p.stat().st_mtime_ns for p in blobs.iterdir()}
    await harness.run("run_command", command="true")
    assert {p.name: p.stat().st_mtime_ns for p in blobs.iterdir()} == times
    assert harness.executor.checkpoints == []


def test_checkpoints_of_deleted_and_stale_sessions_are_pruned(tmp_path: Path) -> None:
    root = tmp_path / "checkpoints"
    for name in ("current", "live", "deleted", "stale"):
        (root / name).mkdir(parents=True)
        (root / name / "index.jsonl").write_text("")
    old = 1_000_000.0

    os.utime(root / "stale" / "index.jsonl", (old, old))
    pruned = prune_checkpoints(
        root,
        keep="current",
        session_exists=lambda sid: sid in {"live", "stale", "current"},
        max_age=30 * 86_400,
    )
    assert sorted(pruned) == ["deleted", "stale"]
    assert sorted(p.name for p in root.iterdir()) == ["current", "live"]


async def test_a_command_cancelled_mid_way_is_still_undoable(
    harness: Harness, workspace: Path
) -> None:
    task = asyncio.create_task(
        harness.executor.execute(call("run_command", command="echo x > made.txt && sleep 30"))
    )
    for _ in range(200):
        if (workspace / "made.txt").exists():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task

    assert harness.executor.undo_last_turn().restored == [workspace / "made.txt"]
    assert not (workspace / "made.txt").exists()


async def test_a_command_blocks_no_thread_that_exit_would_wait_for(
    harness: Harness, workspace: Path
) -> None:
    # Scans, the command check and checkpoint sealing run in daemon threads: one stuck on a
    # hung mount can be abandoned, where the loop's default executor is joined at exit.
    (workspace / "a.txt").write_text("a\n")
    before = set(threading.enumerate())

    result = await harness.run("run_command", command="echo b > a.txt")

    assert not result.is_error, result.content
    started = set(threading.enumerate()) - before
    assert all(thread.daemon for thread in started), [t.name for t in started]


class StuckScanner(WorkspaceScanner):
    """Scans as usual, except that scan number ``stuck_on`` hangs (a dead network mount)
    until ``release`` is set."""

    def __init__(self, root: Path, stuck_on: int) -> None:
        super().__init__(root, BlobStore(None), SnapshotLimits())
        self.stuck_on = stuck_on
        self.scans = 0
        self.release = threading.Event()

    def snapshot(self, ignore: GitIgnore, stop: threading.Event | None = None) -> Snapshot:
        self.scans += 1
        if self.scans == self.stuck_on:
            self.release.wait(30)
        return super().snapshot(ignore, stop)


@pytest.mark.parametrize("stuck_on", [1, 2], ids=["before", "after"])
async def test_a_hung_scan_lets_the_command_finish_without_undo(
    workspace: Path, stuck_on: int
) -> None:
    (workspace / "a.txt").write_text("a\n")
    scanner = StuckScanner(workspace, stuck_on)
    store = CheckpointStore(workspace)
    recorder = CommandRecorder(scanner, store, scan_timeout=0.3)
    call = ToolUseBlock(id="t1", name="run_command", input={"command": "echo b > a.txt"})

    async def command() -> ToolResultBlock:
        (workspace / "a.txt").write_text("b\n")
        return ToolResultBlock(tool_use_id="t1", content="[exit code 0]")

    result = await asyncio.wait_for(recorder.run(call, turn=1, number=1, command=command), 10)

    assert (workspace / "a.txt").read_text() == "b\n"  # the command ran
    assert "/undo cannot restore what this command changed" in result.content
    scanner.release.set()  # the mount comes back: the abandoned scan must record nothing
    await asyncio.sleep(0.3)
    assert store.entries == []
