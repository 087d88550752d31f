"""Every model request's tokens, counted where the answer arrives, under what it was for.

The loop's own count saw only its turns' final answers: compaction's summaries, and the
first, truncated answer before a larger output limit was asked for, were missing from
``/cost`` and ``-p``'s ``usage``. `UsageLedger` is fed by `recovery.retry.RetryLoop` for each
answer any model gave, whoever asked.
"""

from __future__ import annotations

from collections.abc import Callable

from providers import RequestKind, Usage

UsageListener = Callable[[RequestKind, str, Usage], None]
"""Told of each answer's usage: what the request was for, the model that answered, tokens."""


class UsageLedger:
    """Tokens used in this run, in total, per model and per purpose (`RequestKind`)."""

    def __init__(self) -> None:
        self.total = Usage()
        self.by_model: dict[str, Usage] = {}
        self.by_kind: dict[str, Usage] = {}
        self._listeners: list[UsageListener] = []
        self.last_seconds: float | None = None
        """How long the request of the answer counted last took, from sending to its end."""

    def subscribe(self, listener: UsageListener) -> None:
        """Tell ``listener`` of every answer from now on (e.g. to save it in the session)."""
        self._listeners.append(listener)

    def add(
        self, kind: RequestKind, model: str, usage: Usage, seconds: float | None = None
    ) -> None:
        """Count one answer's ``usage``; its request took ``seconds``."""
        self.last_seconds = seconds
        self.total = self.total + usage
        self.by_model[model] = self.by_model.get(model, Usage()) + usage
        self.by_kind[kind.value] = self.by_kind.get(kind.value, Usage()) + usage
        for listener in self._listeners:
            listener(kind, model, usage)


def merged_usage(*counts: dict[str, Usage]) -> dict[str, Usage]:
    """Usage per key (model, purpose), summed over ``counts``."""
    merged: dict[str, Usage] = {}
    for count in counts:
        for key, usage in count.items():
            merged[key] = merged.get(key, Usage()) + usage
    return merged
