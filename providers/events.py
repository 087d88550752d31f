"""Events: the record of everything recovery, tools and compaction do on the person's behalf.

Each layer defines its own event types as subclasses of `Event` with a literal ``type`` tag.
Subscribers (the UI, structlog, the session log, ``--output-format json``, ``/stats``)
receive them through an `EventSink`; they serialise with ``model_dump(mode="json")``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ClassVar, Literal

import structlog
from pydantic import BaseModel, ConfigDict


class Event(BaseModel):
    """Base class of all events. Subclasses set ``type`` to a unique literal."""

    model_config = ConfigDict(frozen=True)

    log_level: ClassVar[int] = logging.INFO
    """How the agent's log file keeps it: events that come with every step and that the
    session keeps anyway (a tool starting) are DEBUG, logged only with ``--verbose``."""

    type: str

    def describe(self) -> str:
        """One short line for the person, e.g. a REPL banner."""
        return self.type.replace("_", " ")


EventSink = Callable[[Event], None]


class EventBus:
    """Fans events out to subscribers; a failing subscriber never breaks the publisher."""

    def __init__(self) -> None:
        self._subscribers: list[EventSink] = []

    def subscribe(self, sink: EventSink) -> None:
        """Deliver every later event to ``sink``."""
        self._subscribers.append(sink)

    def unsubscribe(self, sink: EventSink) -> None:
        """Stop delivering events to ``sink`` (no error if it was not subscribed)."""
        if sink in self._subscribers:
            self._subscribers.remove(sink)

    def __call__(self, event: Event) -> None:
        for sink in list(self._subscribers):
            try:
                sink(event)
            except Exception:  # a broken subscriber must not stop the agent
                structlog.get_logger("agent.events").exception(
                    "event_subscriber_failed", event_type=event.type
                )


class Notice(Event):
    """Something the person should know that no other event says: a setting applied for a
    tiny model, a shared-state store that fell back to this process, a server left out."""

    type: Literal["notice"] = "notice"
    text: str
    level: Literal["note", "info", "warning"] = "warning"
    """How it is shown: plainly, dimmed, or as a warning."""

    def describe(self) -> str:
        return self.text
