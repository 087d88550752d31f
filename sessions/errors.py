"""Errors raised by `sessions`; each message tells the person what to do next."""

from __future__ import annotations


class SessionError(Exception):
    """A session cannot be found, opened, read or written. The message is for the person."""


class SessionNotFound(SessionError):
    """No saved session matches the given id or prefix."""


class AmbiguousSession(SessionError):
    """A prefix matches more than one session; ``candidates`` lists their ids."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


class SessionLocked(SessionError):
    """Another live process has the session open; only one writer is allowed at a time."""
