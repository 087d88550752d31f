"""The file tools (`tools.fileio`) and the confined file operations (`tools.guard.safe_fs`)
say the same trouble with a path in the same words (`tools.guard.file_words`)."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tools.base import ToolError
from tools.fileio import open_regular
from tools.guard import file_words as words
from tools.guard.safe_fs import Other, Unreachable, observe, open_parent, split_relative

Make = Callable[[Path], None]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (_fifo, "a named pipe (FIFO)"),
        (_directory, "a directory"),
        (_socket, "a socket"),
    ],
    ids=["fifo", "directory", "socket"],
)
def test_both_layers_name_what_is_there_alike(tmp_path: Path, make: Make, kind: str) -> None:
    make(tmp_path / "thing")
    mode = (tmp_path / "thing").lstat().st_mode

    with pytest.raises(ToolError) as caught:
        open_regular(tmp_path / "thing", "thing")
    with open_parent(tmp_path, ["thing"], create=False) as dir_fd:
        seen = observe(dir_fd, "thing")

    assert words.describe_mode(mode) == kind
    assert str(caught.value).startswith(words.not_a_file("thing", mode))
    assert seen == Other(kind)


def test_nothing_there_is_not_found_in_both_layers(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as caught:
        open_regular(tmp_path / "gone.py", "gone.py")
    with (
        pytest.raises(Unreachable) as unreachable,
        open_parent(tmp_path, ["gone", "x.py"], create=False),
    ):
        pass

    assert str(caught.value).startswith(words.not_found("gone.py"))
    assert str(unreachable.value) == words.not_found("gone", "directory")
    assert unreachable.value.missing


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (stat.S_IFDIR, "x is a directory, not a file"),
        (stat.S_IFIFO, "x is a named pipe (FIFO), not a regular file"),
        (stat.S_IFCHR, "x is a device, not a regular file"),
        (stat.S_IFLNK, "x is a symbolic link, not a regular file"),
    ],
)
def test_not_a_file_wording(mode: int, message: str) -> None:
    assert words.not_a_file("x", mode) == message


@pytest.mark.parametrize("rel", ["", "/etc/passwd", "a/../b", "a//b", "./a"])
def test_a_path_that_could_leave_the_root_is_refused_in_one_wording(rel: str) -> None:
    with pytest.raises(Unreachable) as caught:
        split_relative(rel)
    assert str(caught.value) == words.not_relative(rel)
