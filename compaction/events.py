"""Events of `compaction`: what it did to the conversation, and why."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from compaction.stages import Stage
from providers import Event


class Reason(StrEnum):
    """What asked for compaction."""

    PROACTIVE = "proactive"
    """The conversation passed the threshold before a request."""
    REACTIVE = "reactive"
    """The provider said the request overflowed the context window."""
    MANUAL = "manual"
    """The person ran ``/compact``."""


_STAGE_WORDS = {
    Stage.IMAGES: "dropped old images",
    Stage.SNIP: "snipped old tool results",
    Stage.SUMMARISE: "summarised older turns",
    Stage.DROP: "dropped the oldest turns",
    Stage.TRIM: "shortened tool output the model had not read",
}


class CompactionStarted(Event):
    """Compaction is about to run."""

    type: Literal["compaction_started"] = "compaction_started"
    reason: Reason
    tokens_before: int
    messages_before: int

    def describe(self) -> str:
        return f"Compacting the conversation ({self.reason.value}, ~{self.tokens_before:,} tokens)"


class CompactionApplied(Event):
    """One stage changed the conversation."""

    type: Literal["compaction_applied"] = "compaction_applied"
    stage: Stage
    reason: Reason
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int

    def describe(self) -> str:
        return (
            f"Compacted: {_STAGE_WORDS[self.stage]}, "
            f"~{self.tokens_before:,} → ~{self.tokens_after:,} tokens"
        )


class CompactionFailed(Event):
    """A stage could not run (``stage`` None: no stage had anything left to do)."""

    type: Literal["compaction_failed"] = "compaction_failed"
    stage: Stage | None
    reason: Reason
    error: str

    def describe(self) -> str:
        if self.stage is None:
            return f"Could not compact: {self.error}"
        return f"Compaction's {self.stage.value} stage failed: {self.error}"


class CompactionDisabled(Event):
    """Proactive compaction failed too often in a row and is off for this session."""

    type: Literal["compaction_disabled"] = "compaction_disabled"
    failures: int

    def describe(self) -> str:
        return (
            f"Proactive compaction is off after {self.failures} failures in a row; "
            "run /compact to try again"
        )
