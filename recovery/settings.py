"""Configuration of `recovery` (the ``recovery:`` section of the YAML config)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from providers.chaos import ChaosSpec


class SharedSettings(BaseModel):
    """Recovery state shared by every agent on one API key (``recovery.shared``).

    Every key is documented, with its default, in ``config.example.yaml``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["file", "redis", "off"] = Field(
        default="file",
        description="file: agents on this machine share a small file under AGENT_HOME; redis: "
        "agents on any machine share a Redis server; off: each process on its own.",
    )
    url: str = Field(
        default="redis://localhost:6379/0", description="The Redis server, for backend redis."
    )
    requests_per_minute: int | None = Field(
        default=None, ge=1, description="Client-side cap on requests per minute per key."
    )
    tokens_per_minute: int | None = Field(
        default=None, ge=1, description="Client-side cap on input tokens per minute per key."
    )
    max_concurrent: int | None = Field(
        default=None, ge=1, description="Client-side cap on requests in flight at once per key."
    )

    @field_validator("backend", mode="before")
    @classmethod
    def _unquoted_off(cls, value: object) -> object:
        """YAML reads an unquoted ``off`` as false; it means "off" here."""
        return "off" if value is False else value


class RecoverySettings(BaseModel):
    """How model calls are retried, budgeted and failed over.

    Every key is documented, with its default, in the ``recovery:`` section of
    ``config.example.yaml``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True,
        description="false (--no-recovery): each request is sent once, and its error is the "
        "call's: no retry, wait, fallback or output-limit escalation. For debugging a provider.",
    )
    max_attempts: int = Field(
        default=40,
        ge=1,
        description="Requests to one model within one call, the first included. The retry "
        "budget and max_total_wait usually end a call first.",
    )
    base_backoff: float = Field(
        default=1.0,
        gt=0,
        description="Backoff cap in seconds before the first retry after server errors, "
        "timeouts and dropped connections; it doubles up to probe_backoff.",
    )
    probe_backoff: float = Field(
        default=4.0,
        gt=0,
        description="Largest backoff cap in seconds after server errors, timeouts and dropped "
        "connections: a server that is down is asked again every few seconds, within the "
        "retry budget, so work resumes soon after it is back.",
    )
    overload_backoff: float = Field(
        default=8.0,
        gt=0,
        description="Backoff cap in seconds before the first retry after an overload or a rate "
        "limit without retry-after: clients spread out so a busy server can recover.",
    )
    max_backoff: float = Field(
        default=32.0,
        gt=0,
        description="Largest backoff cap in seconds; the cap doubles per retry. Caps the others.",
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
        default=200.0,
        gt=0,
        description="Size of the session's retry token bucket: budget_capacity / retry_cost "
        "retries in a row, then calls fail fast until successes refill it.",
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
    shared: SharedSettings = Field(
        default_factory=SharedSettings,
        description="What agents on the same API key and model share.",
    )
    chaos: str | None = Field(
        default=None,
        description="Inject faults to rehearse outages: PROFILE[:seed=N][:rate=R]... "
        "(providers.chaos lists the profiles); also --chaos and AGENT_CHAOS.",
    )

    @field_validator("chaos")
    @classmethod
    def _chaos_spec(cls, value: str | None) -> str | None:
        if value:
            ChaosSpec.parse(value)  # its ValueError says what is accepted
        return value or None

    @model_validator(mode="after")
    def _check_backoff(self) -> RecoverySettings:
        if self.max_backoff < self.base_backoff:
            raise ValueError(
                f"max_backoff ({self.max_backoff}) must be at least base_backoff "
                f"({self.base_backoff})"
            )
        return self
