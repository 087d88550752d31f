"""Fleet stores: atomic across real processes, safe when a holder is killed, Redis for real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from recovery.fleet import Fleet
from recovery.fleet.file_store import MAX_STATE_BYTES, FileStore
from recovery.fleet.redis_store import RedisStore
from recovery.fleet.store import FallbackStore, ProcessStore, Record, StoreUnavailable
from recovery.settings import RecoverySettings
from tests.fakes.cli import REPO_ROOT

INCREMENT = """
import sys
from pathlib import Path
from recovery.fleet.file_store import MAX_STATE_BYTES, FileStore
store = FileStore(Path(sys.argv[1]), lock_timeout=30)
def bump(record):
    record["count"] = record.get("count", 0) + 1
for _ in range(int(sys.argv[2])):
    store.update("k", bump)
"""

HOLD_AND_HANG = """
import sys, time
from pathlib import Path
from recovery.fleet.file_store import MAX_STATE_BYTES, FileStore
store = FileStore(Path(sys.argv[1]))
def hang(record):
    record["count"] = 999  # a change that never completes
    print("holding", flush=True)
    time.sleep(600)
store.update("k", hang)
"""


def python(script: str, *args: str) -> subprocess.Popen[str]:
    env = os.environ | {"PYTHONPATH": str(REPO_ROOT)}
    code = textwrap.dedent(script)
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, text=True
    )


def bump(record: Record) -> int:
    record["count"] = record.get("count", 0) + 1
    return int(record["count"])


def test_file_store_updates_from_many_processes_are_never_lost(tmp_path: Path) -> None:
    workers = [python(INCREMENT, str(tmp_path), "40") for _ in range(4)]
    for worker in workers:
        assert worker.wait(timeout=120) == 0

    assert FileStore(tmp_path).snapshot()["k"]["count"] == 160
    assert oct((tmp_path / "fleet.json").stat().st_mode & 0o777) == "0o600"


def test_a_holder_killed_mid_write_does_not_stall_the_next_update(tmp_path: Path) -> None:
    store = FileStore(tmp_path, lock_timeout=60)
    store.update("k", bump)
    holder = python(HOLD_AND_HANG, str(tmp_path))
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "holding"
    done: list[float] = []
    waiter = threading.Thread(target=lambda: done.append(store.update("k", bump)))
    waiter.start()
    time.sleep(0.3)
    assert not done  # the live holder has the lock

    killed_at = time.monotonic()
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    waiter.join(timeout=30)

    assert done == [2]  # the unfinished change never became the state
    assert time.monotonic() - killed_at < 10
    assert store.snapshot()["k"]["count"] == 2


def test_a_stuck_holder_makes_the_update_fail_fast(tmp_path: Path) -> None:
    holder = python(HOLD_AND_HANG, str(tmp_path))
    assert holder.stdout is not None
    holder.stdout.readline()
    try:
        with pytest.raises(StoreUnavailable, match="stayed locked"):
            FileStore(tmp_path, lock_timeout=0.2).update("k", bump)
    finally:
        holder.kill()
        holder.wait(timeout=10)


def test_a_damaged_state_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / "fleet.json").write_text("{not json")
    store = FileStore(tmp_path)

    assert store.snapshot() == {}
    assert store.update("k", bump) == 1


def test_a_change_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    now = [1000.0]
    store = FileStore(tmp_path, clock=lambda: now[0])
    store.update("k", bump)
    now[0] += 60

    assert store.update("k", lambda record: record.get("count")) == 1

    assert store.snapshot()["k"]["updated"] == 1000.0  # not rewritten
    now[0] += 7200  # but a record in use is refreshed before it could go stale
    store.update("k", lambda record: None)
    assert store.snapshot()["k"]["updated"] == 8260.0


def test_another_agents_write_is_seen_though_size_inode_and_mtime_are_unchanged(
    tmp_path: Path,
) -> None:
    # A store keeps the records of the bytes it last wrote; another agent's in-place write
    # of the same length within one tick of the file-system clock must still be read.
    mine, theirs = (
        FileStore(tmp_path, clock=lambda: 1000.0),
        FileStore(tmp_path, clock=lambda: 1000.0),
    )
    state = tmp_path / "fleet.json"
    assert mine.update("k", bump) == 1
    before = os.stat(state)

    assert theirs.update("k", bump) == 2
    os.utime(state, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(state)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )

    assert mine.update("k", bump) == 3
    assert theirs.update("k", bump) == 4
    assert mine.snapshot()["k"]["count"] == 4


def test_a_change_that_fails_halfway_leaves_no_trace(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.update("k", bump)

    def half(record: Record) -> None:
        record["count"] = 50
        raise RuntimeError("change failed")

    with pytest.raises(RuntimeError):
        store.update("k", half)

    assert store.update("k", bump) == 2
    assert store.snapshot()["k"]["count"] == 2


def test_a_shrinking_state_is_rewritten_whole(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.update("k", lambda record: record.update(big="x" * 10_000))
    store.update("k", lambda record: record.pop("big"))

    text = (tmp_path / "fleet.json").read_text()
    assert "big" not in text
    assert text == text.strip()
    assert store.snapshot()["k"].keys() == {"updated"}


def test_padding_left_by_a_holder_killed_before_the_cut_still_reads(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.update("k", bump)
    state = tmp_path / "fleet.json"
    state.write_text(state.read_text() + " " * 500)  # pwrite done, ftruncate never ran

    assert store.snapshot()["k"]["count"] == 1
    assert store.update("k", bump) == 2
    assert state.read_text() == state.read_text().strip()


@pytest.mark.parametrize("hostile", ["fifo", "nested", "symlink", "huge"])
def test_a_hostile_state_file_reads_as_empty_and_blocks_nothing(
    tmp_path: Path, hostile: str
) -> None:
    state, outside = tmp_path / "fleet" / "fleet.json", tmp_path / "outside.json"
    state.parent.mkdir()
    outside.write_text('{"k": {"count": 41, "updated": 1e18}}')
    if hostile == "fifo":
        os.mkfifo(state)  # opening it for reading would wait for a writer forever
    elif hostile == "nested":
        state.write_text("[" * 100_000 + "]" * 100_000)
    elif hostile == "symlink":
        state.symlink_to(outside)
    else:
        state.write_bytes(b" " * (MAX_STATE_BYTES + 1) + b"{}")
    store = FileStore(state.parent)

    assert store.snapshot() == {}
    assert store.update("k", bump) == 1
    assert outside.read_text() == '{"k": {"count": 41, "updated": 1e18}}'


def test_fallback_store_works_alone_with_one_warning_and_returns_later(tmp_path: Path) -> None:
    warnings: list[str] = []
    now = [0.0]
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory should be")
    shared = FileStore(blocked / "fleet")
    store = FallbackStore(shared, warnings.append, clock=lambda: now[0])

    assert store.update("k", bump) == 1
    assert store.update("k", bump) == 2
    assert store.name == "process"
    assert len(warnings) == 1
    assert "not shared" in warnings[0]

    blocked.unlink()
    now[0] += 60
    assert store.update("k", bump) == 1  # shared again: the file store starts empty
    assert store.name == "file"
    assert len(warnings) == 1


def test_process_store_keeps_records_in_memory() -> None:
    store = ProcessStore()
    store.update("k", bump)

    assert store.snapshot() == {"k": {"count": 1}}


def test_redis_store_changes_records_atomically(redis_url: str) -> None:
    store = RedisStore(redis_url)

    def worker() -> None:
        other = RedisStore(redis_url)
        for _ in range(30):
            other.update("k", bump)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert store.snapshot()["k"]["count"] == 120


def test_agents_on_machines_with_skewed_clocks_share_the_redis_servers_time(
    redis_url: str,
) -> None:
    ahead = RedisStore(redis_url, local_clock=lambda: time.time() + 3600)  # an hour fast
    behind = RedisStore(redis_url, local_clock=lambda: time.time() - 600)  # ten minutes slow
    fleet_ahead = Fleet(ahead, RecoverySettings())
    fleet_behind = Fleet(behind, RecoverySettings())

    fleet_ahead.server_wait("k", 20.0)  # one agent is told to wait 20 s ...

    [view] = fleet_behind.views()  # ... and the other sees 20 s, not an hour and 20 s
    assert 15.0 < view.wait <= 20.0
    assert abs(ahead.clock() - behind.clock()) < 1.0


def test_until_redis_answers_the_clock_is_this_machines() -> None:
    pytest.importorskip("redis")
    store = RedisStore("redis://127.0.0.1:1/0", timeout=0.2, local_clock=lambda: 1000.0)
    assert store.clock() == 1000.0


def test_unreachable_redis_falls_back_with_one_warning() -> None:
    pytest.importorskip("redis")
    warnings: list[str] = []
    store = FallbackStore(RedisStore("redis://127.0.0.1:9/0", timeout=0.2), warnings.append)

    assert store.update("k", bump) == 1
    assert store.update("k", bump) == 2
    assert [w for w in warnings if "Redis is unreachable" in w] == warnings
    assert len(warnings) == 1


def test_bad_redis_url_is_reported() -> None:
    pytest.importorskip("redis")
    with pytest.raises(StoreUnavailable, match=r"recovery\.shared\.url"):
        RedisStore("http://not-redis")


@pytest.mark.parametrize("how", ["deleted", "renamed over", "replaced by a link"])
def test_an_update_after_the_state_file_was_replaced_reaches_the_new_file(
    tmp_path: Path, how: str
) -> None:
    # The store keeps fleet.json open between updates; a file put in its place (a person
    # deleting it, a restore renaming a copy over it) is the one the next update reads and
    # writes, not the old one it held open.
    store = FileStore(tmp_path)
    assert store.update("k", bump) == 1
    state = tmp_path / "fleet.json"
    other = json.dumps({"k": {"count": 40, "updated": time.time()}})
    if how == "deleted":
        state.unlink()
    elif how == "renamed over":
        copy = tmp_path / "copy.json"
        copy.write_text(other)
        copy.replace(state)
    else:
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text(other)
        state.unlink()
        state.symlink_to(elsewhere)

    counted = store.update("k", bump)

    assert counted == (41 if how == "renamed over" else 1)
    assert FileStore(tmp_path).snapshot()["k"]["count"] == counted
    if how == "replaced by a link":  # never followed: the link is replaced, not written through
        assert not state.is_symlink()
        assert (tmp_path / "elsewhere.json").read_text() == other
