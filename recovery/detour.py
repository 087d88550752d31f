"""A fallback that comes back: when the session left its model, why, and when it tries it again.

After a switch caused by a passing failure (overload, rate limit, outage, timeout) the model
the session left is tried again, with one request at the start of a step, once the breaker's
cool-down has passed; each failed trial doubles the wait, up to `MAX_TRIAL_INTERVAL`. A
switch caused by the account or the request (a bad key, no permission, no quota, an unknown
model) holds for the rest of the session: trying again cannot help.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from providers import ErrorKind

MAX_TRIAL_INTERVAL = 600.0
"""Longest wait in seconds between two trials of the model the session left."""

STAYS_BECAUSE: Mapping[ErrorKind, str] = {
    ErrorKind.AUTH: "the API key was refused",
    ErrorKind.PERMISSION: "the key may not use this model",
    ErrorKind.QUOTA: "the account has no quota left",
    ErrorKind.NOT_FOUND: "the model is unknown to the provider",
}
"""Kinds after which a switch holds for the session, and why, in words for the person."""


@dataclass
class Detour:
    """The session runs on a fallback; ``home`` is the chain index of the model it left.

    Attributes:
        home: Chain index of the model to come back to.
        since: Clock time of the switch.
        reason: Why the session left it (``"3 overloads in a row"``).
        stays_because: Set when the switch holds for the session (why, for the person).
        interval: Seconds between the last failure of the home model and its next trial.
        next_trial: Clock time of the next trial (None when it stays).
    """

    home: int
    since: float
    reason: str
    stays_because: str | None
    interval: float
    next_trial: float | None

    @classmethod
    def start(
        cls, home: int, now: float, reason: str, kind: ErrorKind | None, cooldown: float
    ) -> Detour:
        """A detour that began at ``now`` because of an error of ``kind`` (None: not known)."""
        stays = STAYS_BECAUSE.get(kind) if kind is not None else None
        interval = min(max(cooldown, 1.0), MAX_TRIAL_INTERVAL)
        next_trial = None if stays is not None else now + interval
        return cls(home, now, reason, stays, interval, next_trial)

    def due(self, now: float) -> bool:
        """Whether the home model is tried at the start of this step."""
        return self.next_trial is not None and now >= self.next_trial

    def trial_failed(self, now: float, kind: ErrorKind | None) -> None:
        """The trial got no answer: wait twice as long, or stay for good after a bad key."""
        stays = STAYS_BECAUSE.get(kind) if kind is not None else None
        if stays is not None:
            self.stays_because, self.next_trial = stays, None
            return
        self.interval = min(self.interval * 2, MAX_TRIAL_INTERVAL)
        self.next_trial = now + self.interval

    def trial_postponed(self, now: float, seconds: float) -> None:
        """The home model may not be sent to yet (a server's wait, a fleet's open breaker)."""
        self.next_trial = now + max(seconds, 1.0)


@dataclass(frozen=True)
class DetourView:
    """Where the session stands on a fallback, for ``/model`` and ``/stats``.

    Attributes:
        primary: The model the session left.
        fallback: The model it runs on.
        since_ago: Seconds since the switch.
        reason: Why it switched.
        next_trial_in: Seconds until the primary is tried again (None: it is not).
        stays_because: Why it is not, when it is not.
    """

    primary: str
    fallback: str
    since_ago: float
    reason: str
    next_trial_in: float | None
    stays_because: str | None
