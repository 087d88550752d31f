"""Saved outputs are bounded: per session, and old sessions' are removed."""

from __future__ import annotations

import os
from pathlib import Path

from tools.saved_output import KEEP_FILES, SavedOutput, prune_saved_outputs


def _session(root: Path, name: str, age_days: float) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "command-x.txt").write_text("out\n")
    when = directory.stat().st_mtime - age_days * 86_400
    os.utime(directory, (when, when))
    return directory


def test_old_sessions_outputs_are_removed_and_the_rest_kept(tmp_path: Path) -> None:
    root = tmp_path / "outputs"
    old = _session(root, "old", 40)
    recent = _session(root, "recent", 1)
    current = _session(root, "current", 40)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "command-keep.txt").write_text("keep")
    (root / "link").symlink_to(elsewhere)

    prune_saved_outputs(root, keep="current", max_age=30 * 86_400)

    assert not old.exists()
    assert recent.exists()
    assert current.exists()
    assert (elsewhere / "command-keep.txt").read_text() == "keep"


def test_only_the_newest_outputs_of_a_session_are_kept(tmp_path: Path) -> None:
    for n in range(KEEP_FILES + 3):
        saved = SavedOutput(tmp_path, lambda text: text)
        saved.start(f"run {n}\n".encode())
        assert saved.close(keep=True) is not None
    assert len(list(tmp_path.glob("command-*.txt"))) == KEEP_FILES


def test_an_output_not_cut_leaves_no_file(tmp_path: Path) -> None:
    saved = SavedOutput(tmp_path, lambda text: text)
    saved.start(b"short\n")
    assert saved.close(keep=False) is None
    assert list(tmp_path.iterdir()) == []
