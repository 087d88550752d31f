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
from typing import Generic, TypeVar

from agent.llm.messages import Message

__all__ = ["WireCache"]

T = TypeVar("T")


class WireCache(Generic[T]):
    """Maps messages with ``convert``, remembering the messages of the latest request.

    Entries are keyed by identity and hold their message, so an id is never reused while
    its entry lives; what the latest request no longer sent is dropped.
    """

    def __init__(self, convert: Callable[[Message], T]) -> None:
        self._convert = convert
        self._latest: dict[int, tuple[Message, T]] = {}

    def __call__(self, messages: Sequence[Message]) -> list[T]:
        kept: dict[int, tuple[Message, T]] = {}
        wire: list[T] = []
        for message in messages:
            entry = self._latest.get(id(message))
            if entry is None or entry[0] is not message:
                entry = (message, self._convert(message))
            kept[id(message)] = entry
            wire.append(entry[1])
        self._latest = kept
        return wire
