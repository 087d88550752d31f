"""A capacity limit for the fake LLM server: a token bucket shared by every client.

Like a real API on one organisation's key: a request takes a token; with none left the
server answers 429 ``rate_limit_error`` with a ``retry-after`` (whole seconds until a token
is back). Every answer carries the vendors' rate-limit headers (``anthropic-ratelimit-*``
and ``x-ratelimit-*``). The bucket also counts what a fleet benchmark reports: requests
received, 429s sent, and requests that arrived before a retry-after already given had passed.

    fake_llm.limit_capacity(rate=2.0, burst=4)
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["Admission", "Capacity"]

GATE_TIMEOUT = 300.0
DELIVERY = 0.25


@dataclass(frozen=True)
class Admission:
    """The bucket's verdict on one request: admitted or not, and the headers to send."""

    admitted: bool
    retry_after: int
    headers: dict[str, str]


class Capacity:
    """A token bucket of ``burst`` requests refilled at ``rate`` per second.

    Args:
        rate: Requests per second the server sustains.
        burst: Requests it takes at once from a full bucket.
        clock: Seconds (wall clock: the reset times in the headers are absolute).
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.time) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._level = float(burst)
        self._at = clock()
        self._told: list[tuple[float, float]] = []
        self.received = 0
        self.throttled = 0
        self.early = 0
        """Requests that arrived while a retry-after some client had been given was running."""
        self.early_settled = 0
        """Of those, the ones that arrived ``DELIVERY`` seconds or more after the 429 was sent:
        time enough for the told agent to read and publish it, and for a request another
        agent had already sent to arrive."""
        self._gate: threading.Barrier | None = None
        self._gated = 0
        self.admitted_at: list[float] = []
        self.started_at: float | None = None
        """When the first request was admitted or refused (after the start gate, if any)."""

    def start_gate(self, clients: int) -> None:
        """Hold the first request of each of ``clients`` until all have arrived.

        Agents take seconds to start, more when many start on a busy machine; the gate makes
        a fleet's load start at once, as a batch of jobs does once its processes are up.
        """
        self._gate = threading.Barrier(clients)
        self._gated = 0

    def admit(self) -> Admission:
        """Take a token for one request, or refuse it; count it either way."""
        arrived = self._clock()
        self._pass_gate()
        with self._lock:
            now = self._clock()
            if self.started_at is None:
                self.started_at = now
                self._at = now
            self.received += 1
            # Sent after a 429 had told some client to wait, and before that wait was over.
            if any(told <= arrived < until for told, until in self._told):
                self.early += 1
            if any(told + DELIVERY <= arrived < until for told, until in self._told):
                self.early_settled += 1
            self._level = min(self.burst, self._level + (now - self._at) * self.rate)
            self._at = now
            admitted = self._level >= 1
            if admitted:
                self._level -= 1
                self.admitted_at.append(now)
            else:
                self.throttled += 1
            retry_after = 0 if admitted else max(1, math.ceil((1 - self._level) / self.rate))
            return Admission(admitted, retry_after, self._headers(now))

    def _pass_gate(self) -> None:
        with self._lock:
            gate = self._gate
            if gate is None or self._gated >= gate.parties:
                return
            self._gated += 1
        # A client that never comes breaks the barrier: the others go on.
        with contextlib.suppress(threading.BrokenBarrierError):
            gate.wait(timeout=GATE_TIMEOUT)

    def told(self, retry_after: int) -> None:
        """A 429 with ``retry-after`` has just been sent: from now, requests before it are early."""
        with self._lock:
            now = self._clock()
            self._told.append((now, now + retry_after))

    def _headers(self, now: float) -> dict[str, str]:
        remaining = math.floor(self._level)
        full_in = (self.burst - self._level) / self.rate
        reset = datetime.fromtimestamp(now + full_in, UTC).isoformat().replace("+00:00", "Z")
        return {
            "anthropic-ratelimit-requests-limit": str(self.burst),
            "anthropic-ratelimit-requests-remaining": str(remaining),
            "anthropic-ratelimit-requests-reset": reset,
            "x-ratelimit-limit-requests": str(self.burst),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": f"{full_in:.3f}s",
        }
