"""`Fleet`: recovery state shared by every agent on one API key and model.

Many agents (worktrees, CI jobs, a batch of ``agent -p``) often share one organisation's rate
limits. Each agent publishes what it learns — a server's retry-after, the rate-limit headroom
of every response, a failing model, retries spent — and consults it before each request, so
a wait told to one is honoured by all and requests are paced before the limit is hit. Keys
are (provider, credential fingerprint, model); the fingerprint is a hash, never the key.
The records live in a `recovery.fleet.store.FleetStore`; `recovery.fleet.state` changes them.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from providers.ratelimit import RateLimits
from recovery.fleet import state
from recovery.fleet.state import Hold, Limits
from recovery.fleet.store import FleetStore, Record
from recovery.settings import RecoverySettings

__all__ = ["Fleet", "FleetView", "Hold", "credential_fingerprint"]

log = structlog.get_logger("recovery.fleet.shared")

RELEASE_MERGE = 0.05
"""Seconds a release waits to be written with the same agent's next request on its key."""


def credential_fingerprint(api_key: str | None, base_url: str | None) -> str:
    """A short, irreversible name for an API key at an endpoint (the key is never stored)."""
    digest = hashlib.sha256(f"{base_url or ''}\0{api_key or ''}".encode()).hexdigest()
    return digest[:12]


@dataclass(frozen=True)
class FleetView:
    """What the fleet knows about one key, for ``/stats``.

    Attributes:
        model: ``provider:model``.
        account: The credential fingerprint.
        wait: Seconds before the server accepts requests again (0: now).
        breaker_open: Seconds the fleet still skips the model (0: closed).
        requests: (estimated remaining, limit) of the server's request limit, if reported.
        tokens: The same for its token limit.
        in_flight: Requests being answered right now, over all agents.
        budget: Retry tokens left in the fleet's budget (None when not shared).
    """

    model: str
    account: str
    wait: float
    breaker_open: float
    requests: tuple[int, int] | None
    tokens: tuple[int, int] | None
    in_flight: int
    budget: float | None


class Fleet:
    """The shared recovery state, as one agent uses it.

    Args:
        store: Where the records live.
        settings: Breaker threshold and cool-down, budget capacity, client-side limits.
        clock: Wall-clock seconds (shared state must agree across processes; default: the
            store's clock, which for Redis is the server's).
    """

    def __init__(
        self,
        store: FleetStore,
        settings: RecoverySettings,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.store = store
        self._settings = settings
        self._clock = clock or store.clock
        shared = settings.shared
        self._limits = Limits(
            shared.requests_per_minute, shared.tokens_per_minute, shared.max_concurrent
        )
        self._host = socket.gethostname()
        self.holder = f"{self._host}:{os.getpid()}:{secrets.token_hex(4)}"
        self._pending: dict[str, tuple[Callable[[Record], None], asyncio.TimerHandle]] = {}
        """Releases held back for the next request on their key (`release`)."""

    @staticmethod
    def key(provider: str, account: str, model: str) -> str:
        """The record name of (provider, credential fingerprint, model)."""
        return f"{provider}|{account}|{model}"

    @property
    def _shared(self) -> bool:
        return self.store.name != "process"

    def acquire(self, key: str, tokens: int) -> Hold:
        """Reserve a request of about ``tokens`` input tokens, or say how long to wait first.

        A release of this key still held back (`release`) is written in the same update.
        """
        now = self._clock()
        released = self._take_pending(key)

        def change(record: Record) -> Hold:
            since = None
            if released is not None:  # the slot passes from the last request to this one
                since = state.taken_at(record, self.holder)
                released(record)
            return state.reserve(
                record, now, tokens, self.holder, self._limits, self._alive, taken_since=since
            )

        return self.store.update(key, change)

    def keep_alive(self, key: str, every: float = state.RENEW_EVERY) -> Callable[[], None]:
        """Renew this agent's in-flight entry every ``every`` seconds while its request goes
        on (a long stream outlives `fleet_state.LEASE`); call what this returns to stop.

        Renewals are what let the lease be short: a holder that crashed, on a machine where
        no other agent can check its process, frees its slot within a lease.
        """
        loop = asyncio.get_running_loop()
        timers: list[asyncio.TimerHandle] = []

        def renew() -> None:
            now = self._clock()
            try:
                self.store.update(key, lambda r: state.renew(r, now, self.holder))
            except Exception:  # a timer callback has nobody to raise to; the slot may lapse
                log.warning("fleet_renew_failed", key=key, exc_info=True)
            timers[0] = loop.call_later(every, renew)

        timers.append(loop.call_later(every, renew))
        return lambda: timers[0].cancel()

    def release(self, key: str, reported: RateLimits | None, *, answered: bool = False) -> None:
        """The reserved request is over; publish the headroom it reported.

        ``answered``: the model answered in full, which closes the shared breaker and refills
        the shared budget a little (one write for both, as this runs on every request).

        On an event loop the write waits `RELEASE_MERGE` seconds for this agent's next
        request on the key, and goes with its reservation in one update: an agent step's
        tool calls take about that long, and each update of the shared state is a locked
        read and write. Anything else that reads or changes the key writes it first, and so
        does `flush` (the agent calls it on close).
        """
        now, settings, alive = self._clock(), self._settings, self._alive

        def change(record: Record) -> None:
            state.release(record, now, self.holder, reported)
            if answered:
                state.breaker_success(record)
                state.budget_change(
                    record, now, settings.budget_capacity, settings.success_refill, None, alive
                )

        self.flush(key)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to write it later from
            self.store.update(key, change)
            return
        timer = loop.call_later(RELEASE_MERGE, self._flush_later, key)
        self._pending[key] = (change, timer)

    def flush(self, key: str | None = None) -> None:
        """Write a release still held back (of ``key``, or of every key) now."""
        for held in [key] if key is not None else list(self._pending):
            change = self._take_pending(held)
            if change is not None:
                self.store.update(held, change)

    def _take_pending(self, key: str) -> Callable[[Record], None] | None:
        pending = self._pending.pop(key, None)
        if pending is None:
            return None
        change, timer = pending
        timer.cancel()
        return change

    def _flush_later(self, key: str) -> None:
        try:
            self.flush(key)
        except Exception:  # a timer callback has nobody to raise to; the lease still ends it
            log.warning("fleet_release_failed", key=key, exc_info=True)

    def server_wait(self, key: str, seconds: float) -> None:
        """Publish a server's retry-after, so every agent honours it."""
        until = self._clock() + seconds
        self.flush(key)
        self.store.update(key, lambda r: state.wait_until(r, until))

    def failure(self, key: str) -> None:
        """A request failed through the model's fault (counts towards the shared breaker)."""
        now, settings = self._clock(), self._settings
        self.flush(key)
        self.store.update(
            key,
            lambda r: state.breaker_failure(
                r, now, settings.breaker_threshold, settings.breaker_cooldown
            ),
        )

    def open_for(self, key: str) -> float:
        """Seconds the fleet still skips this model because it kept failing (0: closed)."""
        self.flush(key)
        record = self.store.snapshot().get(key, {})
        return state.breaker_open_for(record, self._clock())

    def budget_left(self, key: str) -> float:
        """Retry tokens left in the fleet's budget for ``key``.

        Alone (per-process store) the session's own budget decides: infinite.
        """
        if not self._shared:
            return math.inf
        self.flush(key)
        record = self.store.snapshot().get(key, {})
        capacity = self._settings.budget_capacity
        return state.budget_level(record, self._clock(), capacity, self._alive)

    def try_spend(self, key: str, cost: float) -> bool:
        """Take ``cost`` from the fleet's retry budget; True if it could pay.

        Alone (per-process store) the session's own budget already decides: always True.
        """
        if not self._shared or cost <= 0:
            return True
        now, capacity = self._clock(), self._settings.budget_capacity
        self.flush(key)
        return self.store.update(
            key,
            lambda r: state.budget_change(r, now, capacity, -cost, self.holder, self._alive),
        )

    def views(self) -> list[FleetView]:
        """What the fleet knows, one view per key."""
        now = self._clock()
        capacity = self._settings.budget_capacity
        views = []
        self.flush()
        for key, record in sorted(self.store.snapshot().items()):
            provider, _, rest = key.partition("|")
            account, _, model = rest.partition("|")
            views.append(
                FleetView(
                    model=f"{provider}:{model}",
                    account=account,
                    wait=max(0.0, state.number(record.get("not_before")) - now),
                    breaker_open=state.breaker_open_for(record, now),
                    requests=state.headroom_view(record.get("requests"), now),
                    tokens=state.headroom_view(record.get("tokens"), now),
                    in_flight=state.inflight_count(record, now),
                    budget=state.budget_level(record, now, capacity, self._alive)
                    if self._shared
                    else None,
                )
            )
        return views

    def _alive(self, holder: str) -> bool:
        """False only for a holder on this machine whose process is gone."""
        host, _, rest = holder.partition(":")
        pid_text = rest.partition(":")[0]
        if host != self._host or not pid_text.isdigit():
            return True
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
