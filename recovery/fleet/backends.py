"""Opening the fleet store ``recovery.shared`` asks for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from recovery.fleet.file_store import FileStore
from recovery.fleet.redis_store import RedisStore
from recovery.fleet.store import FallbackStore, FleetStore, ProcessStore, StoreUnavailable
from recovery.settings import SharedSettings

__all__ = ["open_store"]


def open_store(shared: SharedSettings, directory: Path, warn: Callable[[str], None]) -> FleetStore:
    """The configured store, falling back to per-process state (with one warning) on failure.

    Args:
        shared: The ``recovery.shared`` settings.
        directory: Where the file backend keeps its state (under ``AGENT_HOME``).
        warn: Shows the person one line.
    """
    if shared.backend == "off":
        return ProcessStore()
    try:
        backend: FleetStore = (
            FileStore(directory) if shared.backend == "file" else RedisStore(shared.url)
        )
    except StoreUnavailable as error:
        warn(f"Recovery state is not shared with other agents: {error}")
        return ProcessStore()
    return FallbackStore(backend, warn)
