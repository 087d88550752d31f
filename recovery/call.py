"""One call's pieces: the model it goes to, its delta counter and its book-keeping."""

from __future__ import annotations

from dataclasses import dataclass, field

from providers import DeltaHandler, Provider, StreamDelta
from providers.lazy import Readies
from providers.models import ModelLimits, ModelRef
from recovery.fleet.shared import Fleet
from recovery.report import Failure


@dataclass(frozen=True)
class ModelTarget:
    """One model of the chain: its reference, the adapter that calls it, and its limits."""

    ref: ModelRef
    provider: Provider
    limits: ModelLimits
    account: str = ""
    """Fingerprint of the credential and endpoint (`recovery.fleet.credential_fingerprint`):
    agents on the same account and model share recovery state."""

    @property
    def fleet_key(self) -> str:
        """The name of this target's record in the fleet's shared state."""
        return Fleet.key(self.ref.provider, self.account, self.ref.name)

    async def ready(self) -> None:
        """Let a lazily built provider import its SDK before the shared state is read."""
        if isinstance(self.provider, Readies):
            await self.provider.ready()


class DeltaCounter:
    """Passes deltas on and counts them, so a restart knows whether anything was shown."""

    def __init__(self, inner: DeltaHandler) -> None:
        self.inner = inner
        self.count = 0

    def __call__(self, delta: StreamDelta) -> None:
        self.count += 1
        self.inner(delta)


@dataclass
class CallLog:
    """Book-keeping of one call's pass along the chain.

    Attributes:
        failures: Why each model given up on did not answer, in order.
        waited: Seconds spent waiting between retries.
        requests: Requests sent.
        stale_stream: Why partially streamed output must be discarded before the next
            request, if it must.
    """

    failures: list[Failure] = field(default_factory=list)
    waited: float = 0.0
    requests: int = 0
    stale_stream: str | None = None
