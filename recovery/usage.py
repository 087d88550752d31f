"""Every model request's tokens, counted where the answer arrives, under what it was for.

The loop's own count saw only its turns' final answers: compaction's summaries, and the
first, truncated answer before a larger output limit was asked for, were missing from
``/cost`` and ``-p``'s ``usage``. `UsageLedger` is fed by `recovery.retry.RetryLoop` for each
answer any model gave, whoever asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from providers import RequestKind, Usage

__all__ = ["AnswerListener", "AnsweredRequest", "UsageLedger", "UsageListener", "merged_usage"]

UsageListener = Callable[[RequestKind, str, Usage], None]
"""Told of each answer's usage: what the request was for, the model that answered, tokens."""


@dataclass(frozen=True)
class AnsweredRequest:
    """One request a model answered (`recovery.failures.FailedRequest` is one it did not)."""

    kind: RequestKind
    """What the request was for."""
    model: str
    """The model that answered, as its server names it."""
    usage: Usage
    seconds: float | None = None
    """How long the request took, from sending to its end."""
    attempt: int = 1
    """Which send to this model in its call it was (1: the first): the request's own, so
    calls under way at once on one model (sub-agents) never mix up each other's."""
    sent_to: str = ""
    """The model the request was sent to, as the chain names it (``anthropic:claude-...``);
    ``model`` may differ (a dated snapshot). Empty when not known."""


AnswerListener = Callable[[AnsweredRequest], None]
"""Told of each answered request, whole (telemetry's ``agent.api_request``)."""


class UsageLedger:
    """Tokens used in this run, in total, per model and per purpose (`RequestKind`)."""

    def __init__(self) -> None:
        self.total = Usage()
        self.by_model: dict[str, Usage] = {}
        self.by_kind: dict[str, Usage] = {}
        self._listeners: list[UsageListener] = []
        self._answer_listeners: list[AnswerListener] = []

    def subscribe(self, listener: UsageListener) -> None:
        """Tell ``listener`` of every answer's usage from now on (e.g. to save it in the
        session)."""
        self._listeners.append(listener)

    def subscribe_answers(self, listener: AnswerListener) -> None:
        """Tell ``listener`` of every answered request from now on, with its time and attempt
        (another ledger's `add`: a provider of sub-agents or side requests counts in the
        session's)."""
        self._answer_listeners.append(listener)

    def add(self, answered: AnsweredRequest) -> None:
        """Count one answered request's usage."""
        usage = answered.usage
        self.total = self.total + usage
        self.by_model[answered.model] = self.by_model.get(answered.model, Usage()) + usage
        kind = answered.kind.value
        self.by_kind[kind] = self.by_kind.get(kind, Usage()) + usage
        for listener in self._listeners:
            listener(answered.kind, answered.model, usage)
        for answer_listener in self._answer_listeners:
            answer_listener(answered)


def merged_usage(*counts: dict[str, Usage]) -> dict[str, Usage]:
    """Usage per key (model, purpose), summed over ``counts``."""
    merged: dict[str, Usage] = {}
    for count in counts:
        for key, usage in count.items():
            merged[key] = merged.get(key, Usage()) + usage
    return merged
