"""Undo snapshot benchmark: what snapshotting the workspace around a run_command costs.

Run: ``python benchmarks/undo_bench.py`` (under a minute; writes only to a temp dir).

For a synthetic repository of N files (4 KB each, 20 per directory, one .gitignore):
1. First snapshot (every file read, hashed and copied into the blob store) against
   ``shutil.copytree`` of the same tree.
2. Snapshot of the unchanged tree (the common case before each command) against a bare
   ``os.walk`` + ``lstat`` of every file.
3. Before/after pair around a command that changed 10 files, with the diff.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tools.undo.checkpoint_files import BlobStore
from tools.undo.snapshots import SnapshotLimits, WorkspaceScanner


def make_repo(root: Path, files: int) -> None:
    (root / ".gitignore").write_text("build/\n*.o\n")
    body = ("def f(x):\n    return x * 2\n" * 150)[:4096]
    for n in range(files):
        directory = root / f"pkg{n // 20}"
        directory.mkdir(exist_ok=True)
        (directory / f"m{n}.py").write_text(f"# {n}\n{body}")


def timed(work: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def bare_walk(root: Path) -> int:
    count = 0
    for current, _, names in os.walk(root):
        for name in names:
            os.lstat(os.path.join(current, name))
            count += 1
    return count


def run(files: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        repo = base / "repo"
        repo.mkdir()
        make_repo(repo, files)

        def first() -> None:
            shutil.rmtree(base / "cp", ignore_errors=True)
            scanner = WorkspaceScanner(repo, BlobStore(base / "cp"), SnapshotLimits())
            scanner.snapshot(scanner.ignore_rules())

        def copy() -> None:
            shutil.rmtree(base / "copy", ignore_errors=True)
            shutil.copytree(repo, base / "copy", symlinks=True)

        scanner = WorkspaceScanner(repo, BlobStore(base / "cp2"), SnapshotLimits())
        scanner.snapshot(scanner.ignore_rules())

        def again() -> None:
            scanner.snapshot(scanner.ignore_rules())

        def around_command() -> None:
            rules = scanner.ignore_rules()
            before = scanner.snapshot(rules)
            for n in range(10):
                path = repo / f"pkg{n}" / f"m{n * 20}.py"
                path.write_text(path.read_text() + f"# changed {time.perf_counter()}\n")
            found = scanner.changes(before, scanner.snapshot(rules))
            assert len(found.changes) == 10

        first_s, copy_s = timed(first), timed(copy)
        again_s, walk_s = timed(again), timed(lambda: bare_walk(repo))
        pair_s = timed(around_command)
        mb = files * 4096 / 1e6
        print(f"{files:>7,} files ({mb:.0f} MB)")
        ratio = first_s / copy_s
        print(f"  first snapshot {first_s:7.3f}s  copytree   {copy_s:7.3f}s  {ratio:5.2f}x")
        ratio = again_s / walk_s
        print(f"  unchanged      {again_s:7.3f}s  walk+lstat {walk_s:7.3f}s  {ratio:5.2f}x")
        print(f"  command (10 changed files), before+after+diff: {pair_s:.3f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000])
    for files in parser.parse_args().files:
        run(files)


if __name__ == "__main__":
    main()
