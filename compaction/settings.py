"""Configuration of `compaction` (the ``compaction:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class CompactionSettings(BaseModel):
    """When and how the conversation is compacted.

    Fractions are of the *usable* window: the model's context window minus the output reserve.
    """

    model_config = ConfigDict(extra="forbid")

    proactive: bool = Field(
        default=True,
        description="Compact before a request once the conversation passes the threshold.",
    )
    context_compact_threshold: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Compact proactively above this fraction of the usable window.",
    )
    context_compact_target: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="Compaction shrinks the conversation to about this fraction of the window.",
    )
    output_reserve_tokens: int = Field(
        default=16_000,
        gt=0,
        description="Tokens kept free for the answer (capped by the model's output ceiling).",
    )
    keep_last_tool_results: int = Field(
        default=5,
        ge=0,
        description="Tool results kept whole when old ones are snipped.",
    )
    max_summary_tokens: int = Field(
        default=4_000,
        gt=0,
        description="Output tokens allowed for the summary of older turns.",
    )
    breaker_failures: int = Field(
        default=3,
        gt=0,
        description="Consecutive failed proactive compactions that turn proactive compaction off.",
    )
    max_output_recovery_limit: int = Field(
        default=3,
        ge=0,
        description="Continuation prompts allowed per turn when an answer is cut off.",
    )
    chars_per_token: float = Field(
        default=4.0,
        gt=0,
        description="Characters per token when estimating text the provider has not counted.",
    )

    @model_validator(mode="after")
    def _target_below_threshold(self) -> CompactionSettings:
        if self.context_compact_target >= self.context_compact_threshold:
            raise ValueError(
                "context_compact_target must be below context_compact_threshold "
                f"(got {self.context_compact_target} >= {self.context_compact_threshold})"
            )
        return self
