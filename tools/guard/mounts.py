"""Whether a directory tree lives on local file systems only, where no system call can hang.

File tools hand their I/O to a worker thread (`tools.blocking.in_worker`) so that a read on
a hung network or FUSE mount times out instead of freezing the agent. The hand-off and the
wake-up back cost about 0.1 ms of CPU and two context switches a call, the largest part of a
small read. A small read in a workspace whose tree holds no mount that can hang (read from
``/proc/self/mountinfo``, looked at again every few seconds) runs where it is asked for.
"""

from __future__ import annotations

import os
import re
import threading
import time

__all__ = ["LOCAL_TYPES", "local_tree", "read_mounts", "tree_is_local"]

LOCAL_TYPES = frozenset(
    {
        "bcachefs",
        "btrfs",
        "devtmpfs",
        "exfat",
        "ext2",
        "ext3",
        "ext4",
        "f2fs",
        "hfsplus",
        "jfs",
        "overlay",
        "ramfs",
        "reiserfs",
        "squashfs",
        "tmpfs",
        "vfat",
        "xfs",
        "zfs",
    }
)
"""File systems on a local device or in memory. Anything else (nfs, cifs, fuse.*, 9p, ceph,
and types this list does not know) is taken to be able to hang."""

MOUNTINFO = "/proc/self/mountinfo"
REFRESH_AFTER = 5.0
"""Seconds a reading of the mount table is trusted (a mount made meanwhile is seen then)."""

_OCTAL = re.compile(r"\\([0-7]{3})")
_lock = threading.Lock()
_tables: dict[str, tuple[float, list[tuple[str, str]] | None, dict[str, bool]]] = {}
"""Per mount table: when it was read, its mounts, and the answers given from that reading."""


def local_tree(root: str, *, now: float | None = None, table: str = MOUNTINFO) -> bool:
    """Whether ``root`` (absolute, links resolved) and every mount below it are local.

    False wherever the mount ``table`` cannot be read (not Linux, say): then nothing is
    assumed.
    """
    moment = time.monotonic() if now is None else now
    with _lock:
        read_at, mounts, answers = _tables.get(table, (0.0, None, {}))
        if table not in _tables or not 0 <= moment - read_at < REFRESH_AFTER:
            read_at, mounts, answers = moment, read_mounts(table), {}
            _tables[table] = (read_at, mounts, answers)
        answer = answers.get(root)
        if answer is None:
            answer = answers[root] = mounts is not None and tree_is_local(root, mounts)
    return answer


def read_mounts(path: str = MOUNTINFO) -> list[tuple[str, str]] | None:
    """(mount point, file system type) of each mount, in the table's order; None if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    mounts: list[tuple[str, str]] = []
    for line in text.splitlines():
        # id parent major:minor root mount-point options [optional fields...] - type source ...
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        separator = fields.index("-", 6)
        if len(fields) <= separator + 1:
            continue
        point = _OCTAL.sub(lambda match: chr(int(match.group(1), 8)), fields[4])
        mounts.append((point, fields[separator + 1]))
    return mounts


def tree_is_local(root: str, mounts: list[tuple[str, str]]) -> bool:
    """Whether the mount holding ``root`` and every mount below it are of `LOCAL_TYPES`."""
    # The mount holding root: the longest mount point above it, the last one listed when a
    # point is mounted over.
    holding: tuple[str, str] | None = None
    for point, kind in mounts:
        if _within(root, point) and (holding is None or len(point) >= len(holding[0])):
            holding = (point, kind)
    if holding is None or holding[1] not in LOCAL_TYPES:
        return False
    return all(
        kind in LOCAL_TYPES for point, kind in mounts if point != root and _within(point, root)
    )


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)
