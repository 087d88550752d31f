"""What a fleet record holds and the pure changes agents make to it.

One record per (provider, credential fingerprint, model); every time is wall-clock seconds,
so processes (and, through Redis, machines with synchronised clocks) agree on it:

- ``not_before``: the latest time any agent was told by the server to wait until;
- ``requests`` / ``tokens``: headroom as a level that refills at the rate the server's reset
  times imply (``limit``, ``level``, ``at``, ``rate`` per second, ``full_at``); a send takes
  one request and its estimated input tokens from it *before* the server counts them;
- ``sends`` / ``sent_tokens``: the last minute's sends, kept when a client-side per-minute
  cap is set;
- ``inflight``: requests now being answered, by holder id, for ``max_concurrent``;
- ``breaker``: consecutive model failures and when an open breaker lets a trial through;
- ``budget``: the fleet's retry budget.

Every function takes the record and ``now`` and nothing else that changes, so each is
testable with plain dicts and safe to re-run on an optimistic backend's conflict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from providers.ratelimit import Headroom, RateLimits
from recovery.fleet.store import Record

WINDOW = 60.0
LEASE = 90.0
"""Seconds after which an in-flight entry its holder neither renewed nor released is ignored:
the holder crashed, maybe on another machine, where no process check can tell."""
RENEW_EVERY = 30.0
"""Seconds between renewals of an in-flight entry while its request goes on (a long stream)."""
CONCURRENCY_POLL = 0.25
"""Seconds between looks for a free slot under ``max_concurrent``."""
BUDGET_REFILL_SECONDS = 60.0
"""An idle fleet's retry budget is full again after this long. The shared budget binds agents
running at the same time; at 300 s a run made just after a failed one started with the old
run's empty bucket and failed differently ("retry budget used up" after 2 to 25 s)."""


Alive = Callable[[str], bool]


def _always(holder: str) -> bool:
    return True


@dataclass(frozen=True)
class Limits:
    """Client-side caps per key (None: no cap)."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    max_concurrent: int | None = None


@dataclass(frozen=True)
class Hold:
    """How long to wait before sending, and whether the server itself asked for it."""

    seconds: float
    server: bool = False
    other_agent: bool = False
    """The server's wait was told to another agent on the key (set by the caller, who knows
    its own waits)."""


def reserve(
    record: Record,
    now: float,
    tokens: int,
    holder: str,
    limits: Limits,
    alive: Alive = _always,
    taken_since: float | None = None,
) -> Hold:
    """Take a slot for one request, or say how long to wait first (nothing is taken then).

    ``alive`` tells whether an in-flight holder may still be running (a holder that died
    mid-request never released its slot). ``taken_since``: when ``holder``'s previous
    request, released in the same change, took its slot; taken again within `RENEW_EVERY`
    the slot keeps that time (its lease still outlasts the next renewal), so an agent's
    steps in a row leave the record as it was instead of rewriting it for a new time.
    """
    server_wait = number(record.get("not_before")) - now
    if server_wait > 0:
        return Hold(server_wait, server=True)
    inflight = _live_inflight(record, now, alive)
    waits = [
        _headroom_wait(record.get("requests"), now, 1),
        _headroom_wait(record.get("tokens"), now, tokens),
        _window_wait(record.get("sends"), now, limits.requests_per_minute, 1),
        _token_window_wait(record.get("sent_tokens"), now, limits.tokens_per_minute, tokens),
    ]
    if limits.max_concurrent is not None and len(inflight) >= limits.max_concurrent:
        waits.append(CONCURRENCY_POLL)
    wait = max(waits)
    if wait > 0:
        return Hold(wait)
    _take(record, "requests", now, 1)
    _take(record, "tokens", now, tokens)
    # The last minute's sends are kept only for a cap that needs them: at thousands of
    # requests a minute they would make every update rewrite a large record.
    if limits.requests_per_minute is not None:
        record["sends"] = [t for t in _floats(record.get("sends")) if t > now - WINDOW] + [now]
    if limits.tokens_per_minute is not None:
        recent = [pair for pair in _pairs(record.get("sent_tokens")) if pair[0] > now - WINDOW]
        record["sent_tokens"] = [[when, amount] for when, amount in recent] + [[now, tokens]]
    if taken_since is None or not 0 <= now - taken_since < RENEW_EVERY:
        taken_since = now
    inflight[holder] = taken_since
    record["inflight"] = inflight
    return Hold(0.0)


def taken_at(record: Record, holder: str) -> float | None:
    """When ``holder``'s in-flight entry was taken or last renewed (None: it has none)."""
    inflight = record.get("inflight")
    started = inflight.get(holder) if isinstance(inflight, dict) else None
    return float(started) if isinstance(started, int | float) else None


def release(record: Record, now: float, holder: str, reported: RateLimits | None) -> None:
    """The request of ``holder`` is answered; absorb the headroom the server reported."""
    inflight = record.get("inflight")
    if isinstance(inflight, dict):
        inflight.pop(holder, None)
    if reported is None:
        return
    for name, headroom in (("requests", reported.requests), ("tokens", reported.tokens)):
        if headroom is not None:
            record[name] = _absorb(record.get(name), headroom, now)


def renew(record: Record, now: float, holder: str) -> None:
    """``holder``'s request is still going on: its slot must not lapse."""
    inflight = record.get("inflight")
    if isinstance(inflight, dict) and holder in inflight:
        inflight[holder] = now


def wait_until(record: Record, until: float) -> None:
    """A server asked not to be called again before ``until``."""
    record["not_before"] = max(number(record.get("not_before")), until)


def breaker_failure(record: Record, now: float, threshold: int, cooldown: float) -> None:
    """A request failed through the model's fault; open the breaker at ``threshold``."""
    breaker = _dict(record, "breaker")
    breaker["failures"] = int(number(breaker.get("failures"))) + 1
    if breaker["failures"] >= threshold:
        breaker["open_until"] = now + cooldown


def breaker_success(record: Record) -> None:
    """The model answered: its breaker is closed for every agent."""
    closed = {"failures": 0, "open_until": 0.0}
    if record.get("breaker", closed) != closed:
        record["breaker"] = closed


def breaker_open_for(record: Record, now: float) -> float:
    """Seconds the fleet's breaker still skips the model (0: closed or ready for a trial)."""
    breaker = record.get("breaker")
    return max(0.0, number(breaker.get("open_until")) - now) if isinstance(breaker, dict) else 0.0


def budget_level(record: Record, now: float, capacity: float, alive: Alive = _always) -> float:
    """Retry tokens left in the fleet's budget (it refills over time and on successes).

    A budget spent only by agents that have exited (``alive`` says so) is full: a new run is
    not punished for an old one.
    """
    budget = record.get("budget")
    if not isinstance(budget, dict):
        return capacity
    spenders = budget.get("by")
    if isinstance(spenders, list) and spenders and not any(alive(str(h)) for h in spenders):
        return capacity
    elapsed = max(0.0, now - number(budget.get("at")))
    return min(capacity, number(budget.get("tokens")) + capacity * elapsed / BUDGET_REFILL_SECONDS)


def budget_change(
    record: Record,
    now: float,
    capacity: float,
    delta: float,
    holder: str | None = None,
    alive: Alive = _always,
) -> bool:
    """Add ``delta`` (negative: spend, by ``holder``) to the budget; False, changing nothing,
    if it cannot pay."""
    level = budget_level(record, now, capacity, alive) + delta
    if level < 0:
        return False
    stored = record.get("budget")
    was_full = not isinstance(stored, dict) or number(stored.get("tokens")) >= capacity
    if level >= capacity and was_full:
        return True  # full before and after: when it filled up no longer matters
    if level >= capacity:
        record["budget"] = {"tokens": capacity, "at": now}
        return True
    spenders = _spenders(stored, alive) if isinstance(stored, dict) else []
    if holder is not None and holder not in spenders:
        spenders.append(holder)
    record["budget"] = {"tokens": level, "at": now, "by": spenders}
    return True


def _spenders(budget: dict[str, Any], alive: Alive) -> list[str]:
    """The live agents that spent from a budget (an exited one no longer counts)."""
    spenders = budget.get("by")
    if not isinstance(spenders, list):
        return []
    return [str(holder) for holder in spenders if alive(str(holder))]


def headroom_view(entry: Any, now: float) -> tuple[int, int] | None:
    """(estimated level now, limit) of a headroom entry, for ``/stats``."""
    if not isinstance(entry, dict):
        return None
    return int(_level(entry, now)), int(number(entry.get("limit")))


def inflight_count(record: Record, now: float) -> int:
    """Requests in flight under a live lease."""
    return len(_live_inflight(record, now, _always))


def _absorb(entry: Any, reported: Headroom, now: float) -> dict[str, float | None]:
    old = entry if isinstance(entry, dict) else None
    limit = float(reported.limit)
    level = float(reported.remaining)
    rate = number(old.get("rate")) if old else 0.0
    full_at = now + reported.reset_in if reported.reset_in is not None else None
    if reported.reset_in and reported.remaining < reported.limit:
        rate = (limit - level) / reported.reset_in
    if old is not None and number(old.get("limit")) == limit:
        # Sends reserved here but not yet counted by the server are in our level, not its.
        level = min(level, _level(old, now))
    return {"limit": limit, "level": level, "at": now, "rate": rate, "full_at": full_at}


def _level(entry: dict[str, Any], now: float) -> float:
    limit = number(entry.get("limit"))
    full_at = entry.get("full_at")
    if isinstance(full_at, int | float) and now >= full_at:
        return limit
    refilled = number(entry.get("level")) + number(entry.get("rate")) * (
        now - number(entry.get("at"))
    )
    return min(limit, refilled)


def _headroom_wait(entry: Any, now: float, amount: int) -> float:
    """Seconds until the headroom holds ``amount`` plus the reserve kept below the limit."""
    if not isinstance(entry, dict) or amount <= 0:
        return 0.0
    limit = number(entry.get("limit"))
    need = min(limit, amount + limit // 20)
    level = _level(entry, now)
    if level >= need:
        return 0.0
    rate = number(entry.get("rate"))
    if rate > 0:
        return (need - level) / rate
    full_at = entry.get("full_at")
    return max(0.0, full_at - now) if isinstance(full_at, int | float) else 0.0


def _take(record: Record, name: str, now: float, amount: int) -> None:
    entry = record.get(name)
    if not isinstance(entry, dict) or amount <= 0:
        return
    rate = number(entry.get("rate"))
    full_at = entry.get("full_at")
    if isinstance(full_at, int | float):
        full_at = max(full_at, now) + (amount / rate if rate > 0 else 0.0)
    record[name] = entry | {"level": _level(entry, now) - amount, "at": now, "full_at": full_at}


def _window_wait(sends: Any, now: float, cap: int | None, amount: int) -> float:
    if cap is None:
        return 0.0
    recent = sorted(t for t in _floats(sends) if t > now - WINDOW)
    if len(recent) + amount <= cap:
        return 0.0
    return recent[len(recent) + amount - cap - 1] + WINDOW - now


def _token_window_wait(pairs: Any, now: float, cap: int | None, tokens: int) -> float:
    if cap is None:
        return 0.0
    need = min(tokens, cap)
    recent = sorted(pair for pair in _pairs(pairs) if pair[0] > now - WINDOW)
    used = sum(amount for _, amount in recent)
    if used + need <= cap:
        return 0.0
    for when, amount in recent:
        used -= amount
        if used + need <= cap:
            return when + WINDOW - now
    return WINDOW


def _live_inflight(record: Record, now: float, alive: Alive) -> dict[str, float]:
    inflight = record.get("inflight")
    if not isinstance(inflight, dict):
        return {}
    return {
        holder: started
        for holder, started in inflight.items()
        if isinstance(started, int | float) and now - started < LEASE and alive(holder)
    }


def _dict(record: Record, name: str) -> dict[str, Any]:
    value = record.get(name)
    if not isinstance(value, dict):
        value = record[name] = {}
    return value


def number(value: Any) -> float:
    """``value`` if it is a number, else 0 (records are read from disk: untrusted)."""
    return float(value) if isinstance(value, int | float) else 0.0


def _floats(value: Any) -> list[float]:
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, int | float)]


def _pairs(value: Any) -> list[tuple[float, int]]:
    if not isinstance(value, list):
        return []
    return [
        (float(p[0]), int(p[1]))
        for p in value
        if isinstance(p, list | tuple)
        and len(p) == 2
        and all(isinstance(v, int | float) for v in p)
    ]
