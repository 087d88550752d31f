from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools import PathOutsideWorkspace, resolve_in_workspace
from tools.workspace import _below


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


_NAMES = st.sampled_from(["a", "b", "link", "up", "file.py", ".", "..", ""])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.lists(_NAMES, min_size=1, max_size=5).map("/".join))
def test_the_shortcut_resolves_as_realpath_does(tmp_path: Path, raw: str) -> None:
    # `resolve_in_workspace` resolves a plain relative path with one lstat per component;
    # whatever it returns must be what realpath gives, through links, files and gaps.
    root = tmp_path / "w"
    if not root.exists():
        (root / "a" / "b").mkdir(parents=True)
        (root / "a" / "file.py").write_text("x")
        (root / "a" / "link").symlink_to(root / "a" / "b")
        (root / "up").symlink_to("..")
        (root / "link").symlink_to("a")
    top = str(root.resolve())
    shortcut = _below(top, raw)
    if shortcut is not None:
        assert shortcut == os.path.realpath(os.path.join(top, raw))
