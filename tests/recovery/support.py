"""Builders for recovery tests: targets, errors and a recovering provider on a virtual clock."""

from __future__ import annotations

import random
from typing import Any

from providers import ChatRequest, ErrorKind, Event, LlmError, Message, Provider
from providers.models import ModelLimits, ModelRef
from recovery import ModelTarget, RecoveringProvider, RecoverySettings
from tests.fakes.clock import VirtualClock

REQUEST = ChatRequest(messages=[Message.user("hi")])


def target(ref: str, provider: Provider, ceiling: int = 64_000) -> ModelTarget:
    return ModelTarget(ModelRef.parse(ref), provider, ModelLimits(200_000, ceiling))


def fail(kind: ErrorKind, message: str = "boom", **fields: Any) -> LlmError:
    fields.setdefault("provider", "anthropic")
    return LlmError(kind, message, **fields)


class Recorder:
    """Collects events and builds recovering providers that publish to it."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.events: list[Event] = []

    def provider(self, *chain: ModelTarget, **settings: Any) -> RecoveringProvider:
        return RecoveringProvider(
            chain,
            settings=RecoverySettings(**settings),
            events=self.events.append,
            clock=self.clock.now,
            sleep=self.clock.sleep,
            rng=random.Random(1),
        )

    def of(self, kind: type[Event]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]
