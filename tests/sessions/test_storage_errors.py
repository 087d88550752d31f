"""Storage failures: links are never followed, and each failure is one clear SessionError.

Tests run as root on some machines, where permission bits do not stop writes; the cases that
only permissions can express are skipped there, the others use failures that hold for root
too (a file where a directory belongs, a directory where a file belongs, a link, /dev/full).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from providers import Message
from sessions import Redactor, SessionError, SessionLocked, SessionStore
from sessions.lock import SessionLock
from sessions.writer import SessionWriter
from tests.fakes.clock import VirtualClock

needs_non_root = pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes through permission bits; the case cannot be built"
)


def _session(store: SessionStore, tmp_path: Path) -> tuple[str, Path]:
    with store.create(cwd=tmp_path, model_chain=["anthropic:x"]) as writer:
        writer.append_message(Message.user("hello"))
    return writer.id, writer.path


def _one_sentence(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text
    assert text.count(". ") == 0, text
    return text


def test_a_session_file_that_is_a_symlink_is_refused_and_its_target_untouched(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path)
    target = tmp_path / "outside.jsonl"
    target.write_bytes(path.read_bytes() + b'{"ts":1,"type":"mess')  # a "torn tail" to cut
    before = target.read_bytes()
    path.unlink()
    path.symlink_to(target)

    for attempt in (store.open, store.load):
        with pytest.raises(SessionError, match="symbolic link") as caught:
            attempt(session_id)
        assert "refuses to follow" in _one_sentence(caught.value)
    assert target.read_bytes() == before
    assert store.list() == []


def test_a_lock_file_that_is_a_symlink_is_refused_and_its_target_untouched(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    lock = path.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    lock.symlink_to(target)

    with pytest.raises(SessionError, match="symbolic link"):
        store.open(session_id)
    assert target.read_text() == "keep me"


def test_a_lock_that_is_a_directory_is_a_clear_error(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path)
    lock = path.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()

    with pytest.raises(SessionError, match="Is a directory; move that directory") as caught:
        store.open(session_id)
    assert not isinstance(caught.value, SessionLocked)
    _one_sentence(caught.value)


def test_a_session_file_that_is_a_directory_or_a_fifo_is_refused_without_hanging(
    store: SessionStore, tmp_path: Path
) -> None:
    session_id, path = _session(store, tmp_path)
    path.unlink()
    path.mkdir()
    with pytest.raises(SessionError, match="cannot read session file"):
        store.open(session_id)
    path.rmdir()
    os.mkfifo(path)
    finished = threading.Event()

    def load() -> None:
        with pytest.raises(SessionError, match="not a regular file"):
            store.load(session_id)
        finished.set()

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    assert finished.is_set(), "loading a FIFO hung"


def test_agent_home_that_is_a_file_is_a_clear_error(tmp_path: Path, clock: VirtualClock) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    store = SessionStore(home, clock=clock.now, redactor=Redactor({}))

    with pytest.raises(SessionError, match=r"Not a directory; .*check AGENT_HOME") as caught:
        store.create(cwd=tmp_path, model_chain=[])
    _one_sentence(caught.value)
    with pytest.raises(SessionError, match="Not a directory"):
        store.list()


def test_a_file_in_place_of_the_sessions_directory_is_a_clear_error(
    tmp_path: Path, clock: VirtualClock
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "sessions").write_text("in the way")
    store = SessionStore(tmp_path / "home", clock=clock.now, redactor=Redactor({}))
    with pytest.raises(SessionError, match=r"cannot create the sessions directory .*File exists"):
        store.create(cwd=tmp_path, model_chain=[])


@needs_non_root
def test_an_unwritable_sessions_directory_is_a_clear_error(
    store: SessionStore, tmp_path: Path
) -> None:
    _session(store, tmp_path)
    store.directory.chmod(0o500)
    try:
        with pytest.raises(SessionError, match="Permission denied; check its permissions"):
            store.create(cwd=tmp_path, model_chain=[])
    finally:
        store.directory.chmod(0o700)


@needs_non_root
def test_a_read_only_session_file_is_a_clear_error(store: SessionStore, tmp_path: Path) -> None:
    session_id, path = _session(store, tmp_path)
    path.chmod(0o400)
    with pytest.raises(SessionError, match=r"open session file for writing .*Permission denied"):
        store.open(session_id)


def _full_disk_writer(tmp_path: Path, clock: VirtualClock) -> SessionWriter:
    lock = SessionLock.acquire(tmp_path / "x.lock", "x")
    return SessionWriter(
        session_id="x",
        path=Path("/dev/full"),
        fd=os.open("/dev/full", os.O_WRONLY),
        lock=lock,
        cwd=tmp_path,
        clock=clock.now,
        redactor=Redactor({}),
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_sentence_and_the_writer_stays_usable(
    tmp_path: Path, clock: VirtualClock
) -> None:
    with _full_disk_writer(tmp_path, clock) as writer:
        for _ in range(2):  # the second failure is as clean as the first
            with pytest.raises(SessionError, match="No space left on device; free some disk"):
                writer.append_message(Message.user("hello"))
            with pytest.raises(SessionError) as caught:
                writer.append_turn_end("failed", "crash")
            _one_sentence(caught.value)


def test_a_record_too_deep_to_read_back_is_refused_by_the_writer(
    store: SessionStore, tmp_path: Path
) -> None:
    deep: dict[str, object] = {}
    for _ in range(150):
        deep = {"x": deep}
    session_id, _ = _session(store, tmp_path)
    _, writer = store.open(session_id)
    with writer, pytest.raises(SessionError, match="nested more than"):
        writer.append_compaction([Message.user("hi")], stats=deep)
    assert store.load(session_id).messages == [Message.user("hello")]
