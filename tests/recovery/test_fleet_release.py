"""A request's release waits briefly to share one update with the agent's next request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from providers.ratelimit import Headroom, RateLimits
from recovery.fleet.file_store import FileStore
from recovery.fleet.shared import RELEASE_MERGE, Fleet
from recovery.fleet.state import RENEW_EVERY
from recovery.fleet.store import ProcessStore, Record
from recovery.settings import RecoverySettings
from tests.fakes.clock import VirtualClock

T = TypeVar("T")
KEY = Fleet.key("anthropic", "abc", "m")
REPORTED = RateLimits(requests=Headroom(limit=10, remaining=7, reset_in=5.0))


class CountingStore(ProcessStore):
    """A per-process store that counts its updates (each a locked write when shared)."""

    def __init__(self) -> None:
        super().__init__()
        self.updates = 0

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        self.updates += 1
        return super().update(key, change)


def in_flight(store: FileStore) -> dict[str, float]:
    return dict(store.snapshot().get(KEY, {}).get("inflight", {}))


async def test_a_release_then_the_next_request_are_one_update() -> None:
    store = CountingStore()
    fleet = Fleet(store, RecoverySettings())
    fleet.acquire(KEY, 100)
    fleet.release(KEY, REPORTED, answered=True)
    assert store.updates == 1  # held back

    fleet.acquire(KEY, 100)

    assert store.updates == 2
    record = store.snapshot()[KEY]
    assert list(record["inflight"]) == [fleet.holder]  # released, then taken again
    assert record["requests"]["level"] < 7  # the reported headroom, less this request


async def test_a_release_with_no_next_request_is_written_shortly_after(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    fleet = Fleet(store, RecoverySettings())
    fleet.acquire(KEY, 100)
    fleet.release(KEY, REPORTED)
    assert fleet.holder in in_flight(store)  # other agents still see the request

    await asyncio.sleep(RELEASE_MERGE * 4)

    assert in_flight(store) == {}
    assert store.snapshot()[KEY]["requests"]["limit"] == 10


async def test_flush_and_anything_else_on_the_key_write_a_held_release_first(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    fleet = Fleet(store, RecoverySettings())
    fleet.acquire(KEY, 100)
    fleet.release(KEY, None)
    fleet.server_wait(KEY, 5.0)
    assert in_flight(store) == {}

    fleet.acquire(KEY, 100)
    fleet.release(KEY, None)
    fleet.flush()  # what the agent does when it closes
    assert in_flight(store) == {}


def test_without_an_event_loop_a_release_is_written_at_once(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    fleet = Fleet(store, RecoverySettings())
    fleet.acquire(KEY, 100)

    fleet.release(KEY, REPORTED)

    assert in_flight(store) == {}


async def test_steps_in_a_row_leave_the_shared_file_as_it_was(tmp_path: Path) -> None:
    clock = VirtualClock(start=1_700_000_000.0)
    store = FileStore(tmp_path, clock=clock.now)
    fleet = Fleet(store, RecoverySettings(), clock=clock.now)
    fleet.acquire(KEY, 100)
    written = store.path.read_bytes()
    started = in_flight(store)[fleet.holder]

    for _ in range(10):  # a step: the answer, a tool call of a second, the next request
        clock.advance(1.0)
        fleet.release(KEY, None, answered=True)
        fleet.acquire(KEY, 100)

    assert store.path.read_bytes() == written  # nothing changed, nothing written
    clock.advance(RENEW_EVERY)
    fleet.release(KEY, None, answered=True)
    fleet.acquire(KEY, 100)
    assert in_flight(store)[fleet.holder] > started  # renewed before its lease could end
    fleet.release(KEY, None)
    fleet.flush()
    assert in_flight(store) == {}
