"""One writer per session: a second process is refused, and a killed holder leaves no lock."""

from __future__ import annotations

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
