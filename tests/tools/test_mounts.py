"""Which workspaces are local enough for a small read to skip the worker thread."""

from __future__ import annotations

from pathlib import Path

import pytest

import tools.files
import tools.guard.mounts
from tools.files import INLINE_READ_BYTES
from tools.guard.mounts import local_tree, read_mounts, tree_is_local

MOUNTINFO = """\
22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw
23 22 0:21 / /proc rw,nosuid - proc proc rw
40 22 0:35 / /home/me/my\\040project rw,relatime shared:5 master:2 - xfs /dev/sdb1 rw
41 40 0:36 / /home/me/my\\040project/data rw - nfs4 server:/export rw,vers=4.2
42 22 0:37 / /srv/fuse rw - fuse.sshfs me@host:/ rw
43 22 0:38 / /tmp rw - tmpfs tmpfs rw
44 43 0:39 / /tmp/over rw - ext4 /dev/sdc rw
45 43 0:40 / /tmp/over rw - fuse.s3fs bucket rw
"""


@pytest.fixture
def mounts(tmp_path: Path) -> list[tuple[str, str]]:
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTINFO)
    found = read_mounts(str(table))
    assert found is not None
    return found


def test_the_table_is_read_with_escaped_spaces_and_optional_fields(
    mounts: list[tuple[str, str]],
) -> None:
    assert ("/home/me/my project", "xfs") in mounts
    assert ("/home/me/my project/data", "nfs4") in mounts
    assert ("/srv/fuse", "fuse.sshfs") in mounts


def test_a_tree_is_local_only_with_no_mount_below_that_can_hang(
    mounts: list[tuple[str, str]],
) -> None:
    assert tree_is_local("/home/me/elsewhere", mounts)  # on the root's ext4
    assert tree_is_local("/home/me/my project/src", mounts)  # on xfs, nothing below
    assert not tree_is_local("/home/me/my project", mounts)  # an NFS mount below it
    assert not tree_is_local("/home/me/my project/data/x", mounts)  # on NFS itself
    assert not tree_is_local("/srv/fuse/repo", mounts)
    assert not tree_is_local("/", mounts)
    assert not tree_is_local("/tmp/over/repo", mounts)  # the later mount over it is FUSE


def test_an_unreadable_table_makes_nothing_local(tmp_path: Path) -> None:
    assert read_mounts(str(tmp_path / "missing")) is None


def test_the_answer_follows_the_table_once_it_is_read_again(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(f"1 0 8:1 / / rw - ext4 /dev/sda rw\n2 1 0:2 / {tmp_path} rw - tmpfs t rw\n")
    assert local_tree(str(tmp_path), now=1e9, table=str(table))

    table.write_text(f"1 0 8:1 / / rw - ext4 /dev/sda rw\n2 1 0:2 / {tmp_path} rw - nfs s:/ rw\n")
    assert local_tree(str(tmp_path), now=1e9 + 1, table=str(table))  # trusted a few seconds
    later = 1e9 + tools.guard.mounts.REFRESH_AFTER
    assert not local_tree(str(tmp_path), now=later, table=str(table))


def test_reads_skip_the_worker_only_for_small_files_in_a_local_tree(tmp_path: Path) -> None:
    small, large = tmp_path / "small.py", tmp_path / "large.log"
    small.write_text("x = 1\n")
    large.write_bytes(b"line\n" * (INLINE_READ_BYTES // 5 + 1))
    local = local_tree(str(tmp_path.resolve()))  # this machine's own table

    assert tools.files._reads_in_place(tmp_path, small) is local
    assert tools.files._reads_in_place(tmp_path, tmp_path / "missing") is local
    assert not tools.files._reads_in_place(tmp_path, large)
