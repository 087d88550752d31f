from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import PathOutsideWorkspace, resolve_in_workspace


def test_relative_path_resolves_inside(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert resolve_in_workspace(tmp_path, "src/a.py") == tmp_path.resolve() / "src" / "a.py"


def test_absolute_path_inside_is_accepted(tmp_path: Path) -> None:
    inside = tmp_path.resolve() / "a.txt"
    assert resolve_in_workspace(tmp_path, str(inside)) == inside


@pytest.mark.parametrize(
    "raw",
    ["..", "../x", "a/../../x", "./../../etc/passwd", "/etc/passwd", "/", "~", "~/x", "a/\x00b"],
)
def test_escapes_are_refused(tmp_path: Path, raw: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, raw)


def test_dotdot_that_stays_inside_is_fine(tmp_path: Path) -> None:
    assert resolve_in_workspace(tmp_path, "a/../b") == tmp_path.resolve() / "b"


def test_symlink_to_outside_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    os.symlink(outside, ws / "link")
    os.symlink(outside / "missing.txt", ws / "dangling")
    for raw in ("link", "link/secret.txt", "dangling"):
        with pytest.raises(PathOutsideWorkspace):
            resolve_in_workspace(ws, raw)


def test_symlink_inside_workspace_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert resolve_in_workspace(tmp_path, "alias/f") == tmp_path.resolve() / "real" / "f"


def test_message_names_path_and_workspace(tmp_path: Path) -> None:
    with pytest.raises(PathOutsideWorkspace, match=r"'\.\./x' is outside the workspace"):
        resolve_in_workspace(tmp_path, "../x")
