"""Detection of a model going in circles within one turn.

Two patterns count as a loop: the same call (same tool, same arguments) failing again and
again, and the same call succeeding again and again with the same result. Small models do
the second: a successful ``list_files()`` repeated fifty times looks like progress to a
failure-only guard. Each pattern has its own thresholds: at ``warn_at`` the model is told,
at ``stop_at`` the loop ends the turn.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from providers.messages import ToolUseBlock


@dataclass(frozen=True)
class RepeatLimits:
    """When to warn the model about a repeated call, and when to stop the turn."""

    warn_at: int
    stop_at: int


@dataclass(frozen=True)
class Repeat:
    """A call seen ``count`` times this turn (failing, or with the same result)."""

    tool: str
    count: int
    failed: bool
    limit_reached: bool


class RepeatedCalls:
    """Counts identical calls per turn and says when the turn must stop.

    Args:
        failures: Thresholds for a call that fails with the same arguments (whatever the error).
        successes: Thresholds for a call that succeeds with the same arguments and result.
    """

    def __init__(self, failures: RepeatLimits, successes: RepeatLimits) -> None:
        self._failures = failures
        self._successes = successes
        self._counts: Counter[tuple[str, str, str | None]] = Counter()
        """(tool, arguments as JSON, result or None for a failure) → calls this turn."""
        self.stop_reason: str | None = None

    def reset(self) -> None:
        """Forget the counts (a new turn begins)."""
        self._counts.clear()
        self.stop_reason = None

    def record(self, call: ToolUseBlock, *, result: str | None) -> Repeat | None:
        """Count ``call`` once more; ``result`` is its output, or None when it failed.

        Returns the repeat when it has reached the warning threshold, else None.
        """
        failed = result is None
        key = _key(call, result)
        self._counts[key] += 1
        count = self._counts[key]
        limits = self._failures if failed else self._successes
        if count < limits.warn_at:
            return None
        limit_reached = count >= limits.stop_at
        if limit_reached and self.stop_reason is None:
            self.stop_reason = _stop_reason(call.name, count, failed)
        return Repeat(call.name, count, failed, limit_reached)


def repeat_note(repeat: Repeat) -> str:
    """The note appended to a repeated call's result, telling the model what it already has.

    Bracketed, like every note appended to a result, so it is not read as the tool's output.
    """
    if repeat.failed:
        return (
            f"[This exact call has failed {repeat.count} times in this turn. Do not repeat it: "
            "change approach (different arguments, another tool, or ask the person).]"
        )
    return (
        f"[You have now made this exact {repeat.tool} call {repeat.count} times in this turn "
        "and got this same result each time, so you already have it (above, and earlier in "
        "the conversation). Do not call it again with the same arguments: use this result to "
        "answer the person, or take a different next step.]"
    )


def _key(call: ToolUseBlock, result: str | None) -> tuple[str, str, str | None]:
    # The result itself, not a digest: the conversation holds it for the turn anyway, and
    # hashing every tool output was a cost of each step.
    return (call.name, json.dumps(call.input, sort_keys=True, default=str), result)


def _stop_reason(tool: str, count: int, failed: bool) -> str:
    if failed:
        return (
            f"Stopped: {tool} failed {count} times with the same arguments. Rephrase the "
            "request or fix the problem, then try again."
        )
    return (
        f"Stopped: the model called {tool} {count} times with the same arguments and got the "
        "same result each time, so it was going in circles. Ask more specifically or use a "
        "larger model (--model); tools.repeated_call_limit in the config raises the limit."
    )
