"""The Redis fleet store, for agents spread over machines (``recovery.shared.backend: redis``).

Each record is one JSON string under ``agent:fleet:<key>``, changed in an optimistic
transaction (``WATCH`` / ``MULTI`` / ``EXEC``, retried when another agent changed it first),
so no lock is ever held and a client that dies mid-change leaves nothing behind. Every
Redis failure becomes `StoreUnavailable`; `FallbackStore` turns that into per-process state.

Agents on other machines compare times in the records (a retry-after's end, headroom refill),
so the store's `clock` is Redis's: this machine's clock plus its offset from the server's
``TIME``, measured once (re-tried every 30 s while the server cannot be reached).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from recovery.fleet.store import Record, StoreUnavailable

__all__ = ["RedisStore"]

T = TypeVar("T")

PREFIX = "agent:fleet:"
EXPIRE_SECONDS = 86_400
_CONFLICT_RETRIES = 50
_REMEASURE_AFTER = 30.0

MISSING_CLIENT = (
    "recovery.shared.backend is redis but the redis client is not installed; "
    "run: pip install 'agent[redis]'"
)


class RedisStore:
    """Fleet records in Redis.

    Args:
        url: ``redis://host:port/db`` (``rediss://`` for TLS; credentials may be in it).
        timeout: Seconds to wait to connect and for each reply.
        local_clock: This machine's wall clock.

    Raises:
        StoreUnavailable: if the ``redis`` package is not installed.
    """

    name = "redis"

    def __init__(
        self, url: str, *, timeout: float = 1.0, local_clock: Callable[[], float] = time.time
    ) -> None:
        self._local_clock = local_clock
        self._offset: float | None = None
        self._measure_after = 0.0
        try:
            import redis
        except ImportError:
            raise StoreUnavailable(MISSING_CLIENT) from None
        self._redis = redis
        try:
            self._client: Any = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout
            )
        except ValueError as error:
            raise StoreUnavailable(f"bad recovery.shared.url: {error}") from None

    def update(self, key: str, change: Callable[[Record], T]) -> T:
        name = PREFIX + key
        try:
            with self._client.pipeline() as pipe:
                for _ in range(_CONFLICT_RETRIES):
                    try:
                        pipe.watch(name)
                        record = _decode(pipe.get(name))
                        result = change(record)
                        pipe.multi()
                        pipe.set(name, json.dumps(record, separators=(",", ":")), ex=EXPIRE_SECONDS)
                        pipe.execute()
                        return result
                    except self._redis.WatchError:
                        continue
        except self._redis.RedisError as error:
            raise StoreUnavailable(f"Redis is unreachable ({error})") from None
        raise StoreUnavailable("Redis kept changing under us; giving up this update")

    def clock(self) -> float:
        """Wall-clock seconds as the Redis server counts them (this machine's until known)."""
        now = self._local_clock()
        if self._offset is None and now >= self._measure_after:
            self._offset = self._server_offset()
            if self._offset is None:
                self._measure_after = now + _REMEASURE_AFTER
        return now + (self._offset or 0.0)

    def _server_offset(self) -> float | None:
        try:
            before = self._local_clock()
            seconds, micros = self._client.time()
            after = self._local_clock()
        except self._redis.RedisError:
            return None
        return float(seconds) + float(micros) / 1e6 - (before + after) / 2

    def snapshot(self) -> dict[str, Record]:
        try:
            names = list(self._client.scan_iter(match=PREFIX + "*", count=100))
            values = self._client.mget(names) if names else []
        except self._redis.RedisError as error:
            raise StoreUnavailable(f"Redis is unreachable ({error})") from None
        return {
            name.decode()[len(PREFIX) :]: _decode(value)
            for name, value in zip(names, values, strict=True)
            if value is not None
        }


def _decode(raw: bytes | None) -> Record:
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
