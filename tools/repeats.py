"""Detection of the model repeating a failing call (same tool, same arguments) in one turn."""

from __future__ import annotations

import json
from collections import Counter

from agent.llm.messages import ToolUseBlock


class RepeatedFailures:
    """Counts identical failing calls per turn; warns at ``warn_at``, stops at ``stop_at``."""

    def __init__(self, warn_at: int, stop_at: int) -> None:
        self._warn_at = warn_at
        self._stop_at = stop_at
        self._counts: Counter[str] = Counter()
        self.stop_reason: str | None = None

    def reset(self) -> None:
        """Forget the counts (a new turn begins)."""
        self._counts.clear()
        self.stop_reason = None

    def count(self, call: ToolUseBlock) -> int:
        """Record one more failure of ``call``; return how often it has failed this turn."""
        key = call.name + json.dumps(call.input, sort_keys=True, default=str)
        self._counts[key] += 1
        count = self._counts[key]
        if count >= self._stop_at:
            self.stop_reason = (
                f"{call.name} failed {count} times with the same arguments, so the turn was "
                "stopped. Rephrase the request or fix the problem, then try again."
            )
        return count

    def should_warn(self, count: int) -> bool:
        return count >= self._warn_at

    def limit_reached(self, count: int) -> bool:
        return count >= self._stop_at


def change_approach(count: int) -> str:
    """The note appended to a result once the same call keeps failing."""
    return (
        f"This exact call has failed {count} times in this turn. Do not repeat it: change "
        "approach (different arguments, another tool, or ask the person)."
    )
