"""Where the fleet's shared recovery state lives: the store protocol and the per-process store.

A store holds one JSON-able record per key (provider, credential fingerprint, model) and
changes it atomically: `update` reads the record, applies a change function, writes it back,
with no other process in between. Backends: `recovery.fleet.file_store` (one machine) and
`recovery.fleet.redis_store` (many machines). `FallbackStore` keeps the agent working, on its own,
while a shared backend is unreachable: coordination is an optimisation, never a new way to fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import structlog

__all__ = ["FallbackStore", "FleetStore", "ProcessStore", "Record", "StoreUnavailable"]

Record = dict[str, Any]
T = TypeVar("T")

_log = structlog.get_logger("recovery.fleet.store")

RETRY_SHARED_AFTER = 30.0
"""Seconds a `FallbackStore` works alone before it tries the shared backend again."""


class StoreUnavailable(Exception):
    """The shared backend could not do an operation (lock timeout, server down, no client)."""


class FleetStore(Protocol):
    """Atomic read-modify-write of one record per key."""

    @property
    def name(self) -> str:
        """The backend, as ``/stats`` shows it (``file``, ``redis``, ``process``)."""
        ...

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        """Apply ``change`` to the record of ``key`` (created empty) atomically; its result.

        ``change`` mutates the record in place and may run more than once (optimistic
        backends retry it on a conflict), so it must depend on nothing but the record.
        """
        ...

    def snapshot(self) -> dict[str, Record]:
        """Every record, read without changing anything."""
        ...

    def clock(self) -> float:
        """Wall-clock seconds every agent on this store agrees on (records hold such times)."""
        ...


class ProcessStore:
    """Records in this process's memory: what one agent knows alone (``backend: off``)."""

    name = "process"

    def __init__(self) -> None:
        self._records: dict[str, Record] = {}

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        return change(self._records.setdefault(key, {}))

    def snapshot(self) -> dict[str, Record]:
        return {key: dict(record) for key, record in self._records.items()}

    def clock(self) -> float:
        return time.time()


class FallbackStore:
    """A shared store that falls back to per-process state, with one warning, when it fails.

    Args:
        shared: The backend to use while it works.
        warn: Shows the person one line (called once per outage).
        clock: Monotonic seconds, for when to try the backend again.
    """

    def __init__(
        self,
        shared: FleetStore,
        warn: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._shared = shared
        self._local = ProcessStore()
        self._warn = warn
        self._clock = clock
        self._alone_until: float | None = None

    @property
    def name(self) -> str:
        return self._local.name if self._alone else self._shared.name

    @property
    def _alone(self) -> bool:
        return self._alone_until is not None and self._clock() < self._alone_until

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        if not self._alone:
            try:
                result = self._shared.update(key, change)
            except StoreUnavailable as error:
                self._fall_back(error)
            else:
                self._alone_until = None
                return result
        return self._local.update(key, change)

    def snapshot(self) -> dict[str, Record]:
        if not self._alone:
            try:
                return self._shared.snapshot()
            except StoreUnavailable as error:
                self._fall_back(error)
        return self._local.snapshot()

    def clock(self) -> float:
        return self._shared.clock()  # alone or not: the times already shared stay comparable

    def _fall_back(self, error: StoreUnavailable) -> None:
        if self._alone_until is None:
            self._warn(f"Recovery state is not shared with other agents for now: {error}")
        _log.warning("fleet_store_unavailable", backend=self._shared.name, error=str(error))
        self._alone_until = self._clock() + RETRY_SHARED_AFTER
