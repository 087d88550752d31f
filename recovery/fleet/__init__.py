"""Recovery state shared by every agent on one API key and model: retry-after, breakers, budget
spends and rate-limit headroom.

`Fleet` (`shared`) is what the retry loop talks to; a `FleetStore` (`store`) holds the records:
per process, in one file under ``AGENT_HOME`` (`file_store`), or in Redis (`redis_store`), as
``recovery.shared`` asks (`backends.open_store`). `state` holds the pure record changes.
"""

from recovery.fleet.backends import open_store
from recovery.fleet.shared import Fleet, FleetView, credential_fingerprint

__all__ = ["Fleet", "FleetView", "credential_fingerprint", "open_store"]
