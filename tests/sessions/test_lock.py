"""One writer per session: a second process is refused, and a killed holder leaves no lock."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers import Message
from sessions import SessionLocked, SessionStore

HOLDER = """
import sys, time
from pathlib import Path
from sessions import SessionStore
loaded, writer = SessionStore(Path(sys.argv[1])).open(sys.argv[2])
print("holding", flush=True)
time.sleep(60)
"""


@pytest.fixture
def holder(store: SessionStore, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A session held open by another process (killed at teardown)."""
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user("hello"))
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.directory.parent), writer.id],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "holding"
    yield writer.id, process
    process.kill()
    process.wait()


def test_a_second_process_is_refused_with_the_holders_pid(
    store: SessionStore, holder: tuple[str, subprocess.Popen[str]]
) -> None:
    session_id, process = holder
    with pytest.raises(
        SessionLocked, match=rf"open in another agent process \(pid {process.pid}\)"
    ):
        store.open(session_id)
    assert store.load(session_id).messages == [Message.user("hello")]


def test_a_killed_holder_leaves_no_stuck_lock(
    store: SessionStore, holder: tuple[str, subprocess.Popen[str]]
) -> None:
    session_id, process = holder
    process.send_signal(signal.SIGKILL)
    process.wait()
    _, writer = store.open(session_id)
    with writer:
        writer.append_message(Message.assistant("hi again"))
    assert store.load(session_id).messages[-1] == Message.assistant("hi again")


def test_the_same_process_cannot_open_a_session_twice(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(cwd=tmp_path, model_chain=[])
    with pytest.raises(SessionLocked):
        store.open(writer.id)
    writer.close()
    _, again = store.open(writer.id)
    again.close()


def test_a_clean_close_leaves_no_lock_file(store: SessionStore, tmp_path: Path) -> None:
    with store.create(cwd=tmp_path, model_chain=[]) as writer:
        writer.append_message(Message.user("hello"))
        lock = store.directory / f"{writer.id}.lock"
        assert lock.exists()
    assert not lock.exists()
    _, again = store.open(writer.id)  # and the session opens again as before
    with again:
        assert lock.exists()
    assert not lock.exists()


def test_a_lock_taken_on_a_removed_file_is_taken_again_on_the_new_one(
    store: SessionStore, tmp_path: Path
) -> None:
    # A process that opened the lock file just before its holder removed it and let go
    # must not hold a lock on a file no one else can see.
    writer = store.create(cwd=tmp_path, model_chain=[])
    lock = store.directory / f"{writer.id}.lock"
    stale = os.open(lock, os.O_RDWR)
    writer.close()
    fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the stale file: nothing protects it
    _, reopened = store.open(writer.id)
    try:
        assert lock.exists()
        assert os.fstat(stale).st_ino != lock.stat().st_ino
        with pytest.raises(SessionLocked):
            store.open(writer.id)
    finally:
        reopened.close()
        os.close(stale)
