"""Session ids: 26 Crockford base32 characters, sortable by creation time (ULID layout).

The first 10 characters encode the creation time in milliseconds, the last 16 are random, so
sorting ids as strings sorts sessions by when they were created.
"""

from __future__ import annotations

import os

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
ID_LENGTH = 26
_TIME_CHARS = 10
_DECODE = {char: value for value, char in enumerate(ALPHABET)}
# Crockford base32 reads I/L as 1 and O as 0, so a hand-typed prefix still resolves.
_DECODE.update({"i": 1, "l": 1, "o": 0})


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_session_id(now: float, randbytes: bytes | None = None) -> str:
    """A new id for a session created at ``now`` (seconds since the epoch)."""
    millis = max(0, int(now * 1000)) & ((1 << 48) - 1)
    random = int.from_bytes(randbytes if randbytes is not None else os.urandom(10), "big")
    return _encode(millis, _TIME_CHARS) + _encode(random & ((1 << 80) - 1), ID_LENGTH - _TIME_CHARS)


def normalize_prefix(prefix: str) -> str | None:
    """``prefix`` lower-cased with Crockford's look-alikes mapped; None if it cannot be an id."""
    text = prefix.strip().lower()
    if not text or len(text) > ID_LENGTH:
        return None
    if any(char not in _DECODE for char in text):
        return None
    return "".join(ALPHABET[_DECODE[char]] for char in text)


def is_session_id(text: str) -> bool:
    """Whether ``text`` is a complete, canonical session id."""
    return len(text) == ID_LENGTH and all(char in ALPHABET for char in text)


def id_time(session_id: str) -> float:
    """The creation time (seconds since the epoch) encoded in ``session_id``."""
    millis = 0
    for char in session_id[:_TIME_CHARS]:
        millis = millis * 32 + _DECODE[char]
    return millis / 1000
