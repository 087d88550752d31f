"""`PacedSync`: background fsyncs of a session file, at most one per interval."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sessions.syncer import PacedSync
from tests.fakes.clock import VirtualClock


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[int]:
    descriptor = os.open(tmp_path / "session.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    yield descriptor
    os.close(descriptor)


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the background fsync never came"
        time.sleep(0.001)


def test_the_first_request_starts_an_fsync_at_once(fd: int) -> None:
    paced = PacedSync(fd, interval=60.0, clock=VirtualClock().now)

    paced.request()

    assert paced.issued == 1
    paced.close()
    assert paced.issued == 1  # nothing was left to sync


def test_requests_within_the_interval_share_one_fsync_which_close_does_not_skip(
    fd: int,
) -> None:
    paced = PacedSync(fd, interval=60.0, clock=VirtualClock().now)
    paced.request()
    for _ in range(50):
        os.write(fd, b"record\n")
        paced.request()

    assert paced.issued == 1  # the time has not moved: the rest waits for the interval
    paced.close()
    assert paced.issued == 2


def test_a_deferred_fsync_starts_by_itself_once_the_interval_is_over(fd: int) -> None:
    clock = VirtualClock()
    paced = PacedSync(fd, interval=0.05, clock=clock.now)
    paced.request()
    os.write(fd, b"record\n")
    paced.request()
    assert paced.issued == 1

    clock.advance(0.05)

    wait_for(lambda: paced.issued == 2)
    paced.close()
    assert paced.issued == 2


def test_with_no_interval_a_request_after_the_last_fsync_starts_its_own(fd: int) -> None:
    paced = PacedSync(fd, interval=0.0)
    for count in range(1, 6):
        paced.request()
        assert paced.issued == count
        wait_for(lambda: not paced.busy)
    paced.close()


def test_a_failed_fsync_is_raised_once_by_what_comes_next() -> None:
    read_end, write_end = os.pipe()  # fsync on a pipe fails with EINVAL
    try:
        paced = PacedSync(write_end, interval=0.0)
        paced.request()
        wait_for(lambda: not paced.busy)

        with pytest.raises(OSError, match="Invalid argument"):
            paced.request()
        paced.request()  # reported once; this one fails again, in the background
        with pytest.raises(OSError, match="Invalid argument"):
            paced.close()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_request_that_reports_a_failure_is_still_synced() -> None:
    read_end, write_end = os.pipe()
    try:
        paced = PacedSync(write_end, interval=0.0)
        paced.request()  # fails in the background
        wait_for(lambda: not paced.busy)

        with pytest.raises(OSError, match="Invalid argument"):
            paced.request()

        assert paced.issued == 2  # the failing report did not drop this request's fsync
        wait_for(lambda: not paced.busy)
        with pytest.raises(OSError, match="Invalid argument"):
            paced.close()
    finally:
        os.close(read_end)
        os.close(write_end)
