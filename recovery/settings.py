"""Configuration of `recovery` (the ``recovery:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class RecoverySettings(BaseModel):
    """How model calls are retried, budgeted and failed over.

    Every key is documented, with its default, in the ``recovery:`` section of
    ``config.example.yaml``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(
        default=8, ge=1, description="Requests to one model within one call, the first included."
    )
    base_backoff: float = Field(
        default=1.0, gt=0, description="Backoff cap in seconds before the first retry."
    )
    max_backoff: float = Field(
        default=32.0, gt=0, description="Largest backoff cap in seconds; the cap doubles per retry."
    )
    max_total_wait: float = Field(
        default=180.0, ge=0, description="Most seconds one call spends waiting between retries."
    )
    max_retry_wait: float = Field(
        default=60.0,
        ge=0,
        description="A server-requested wait longer than this is not slept: fall back to the "
        "next model, or fail at once saying when to try again.",
    )
    rate_limit_floor: float = Field(
        default=2.0, ge=0, description="Shortest wait in seconds after a rate limit."
    )
    budget_capacity: float = Field(
        default=100.0, gt=0, description="Size of the session's retry token bucket."
    )
    retry_cost: float = Field(
        default=5.0, ge=0, description="Tokens one retry takes (twice this for unknown errors)."
    )
    timeout_cost: float = Field(
        default=10.0, ge=0, description="Tokens a retry after a timeout takes."
    )
    success_refill: float = Field(
        default=1.0, ge=0, description="Tokens a successful call puts back in the bucket."
    )
    breaker_threshold: int = Field(
        default=5, ge=1, description="Consecutive failed requests that open a model's breaker."
    )
    breaker_cooldown: float = Field(
        default=30.0, ge=0, description="Seconds an open breaker skips its model before a trial."
    )
    overload_fallback_after: int = Field(
        default=3, ge=1, description="Consecutive overloads before a foreground call falls back."
    )
    background_overload_fallback_after: int = Field(
        default=2,
        ge=1,
        description="Consecutive overloads before a background call falls back or gives up.",
    )
    escalate_max_tokens: bool = Field(
        default=True, description="Retry a response cut at max_tokens once with twice the limit."
    )
    default_max_tokens: int = Field(
        default=8192, gt=0, description="max_tokens for requests that do not set one."
    )

    @model_validator(mode="after")
    def _check_backoff(self) -> RecoverySettings:
        if self.max_backoff < self.base_backoff:
            raise ValueError(
                f"max_backoff ({self.max_backoff}) must be at least base_backoff "
                f"({self.base_backoff})"
            )
        return self
