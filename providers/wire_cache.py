"""`WireCache`: each message's wire form, kept from one request to the next.

Every step sends the whole conversation again, and a conversation only grows at its end:
mapping every message to the vendor's dicts on every request made a step's cost grow with the
history. Messages are immutable, so the form mapped for one request is still right for the
next; only the new messages are mapped. Nothing changes a wire dict once it is built
(`with_cache_breakpoints` marks copies), so the dicts are shared between requests, and
`JsonBody` keeps their JSON text by identity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, count, islice
from operator import is_not, itemgetter
from typing import Generic, TypeVar

from providers.messages import Message

__all__ = ["WireCache", "shared_prefix"]

T = TypeVar("T")


def shared_prefix(items: Sequence[T], before: Sequence[T], *, equal: bool = False) -> int:
    """How many items at the start of ``items`` are the very objects at the start of
    ``before`` (or, with ``equal``, objects equal to them). Every request compares its whole
    history so: the search for the first object that is not the same runs in C."""
    limit = min(len(items), len(before))
    same = next(compress(count(), map(is_not, items, before)), limit)
    while equal and same < limit and items[same] == before[same]:  # rebuilt, equal: go on
        same += 1
        rest = map(is_not, islice(items, same, None), islice(before, same, None))
        same = next(compress(count(same), rest), limit)
    return same


class WireCache(Generic[T]):
    """Maps messages with ``convert``, remembering the messages of the latest request.

    A request starts with the messages the latest one sent (found by identity, so a
    message that was replaced is mapped again); the rest are looked up among what that
    request sent and did not match (a compacted history keeps its tail), and mapped if
    new. What the latest request no longer sent is dropped.
    """

    def __init__(self, convert: Callable[[Message], T]) -> None:
        self._convert = convert
        self._sent: list[tuple[Message, T]] = []

    def __call__(self, messages: Sequence[Message]) -> list[T]:
        previous = self._sent
        same = shared_prefix(messages, list(map(itemgetter(0), previous)))
        sent = previous[:same]
        if same < len(messages):
            # Keyed by identity, each entry holding its message: an id is never reused
            # while its entry lives.
            spare = {id(before): (before, wire) for before, wire in previous[same:]}
            for message in messages[same:]:
                entry = spare.get(id(message))
                if entry is None or entry[0] is not message:
                    entry = (message, self._convert(message))
                sent.append(entry)
        self._sent = sent
        return list(map(itemgetter(1), sent))
