"""Settings sections of the newer parts, kept out of `agent.setup.config` (one class each)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SubagentSettings", "TelemetrySettings"]


class SubagentSettings(BaseModel):
    """The `task` tool's children (`agent.subagents`)."""

    model_config = ConfigDict(extra="forbid")

    max_concurrent: int = Field(default=4, gt=0, le=64)
    max_turns: int = Field(default=30, gt=0)


class TelemetrySettings(BaseModel):
    """OpenTelemetry metrics and events (docs/telemetry.md); where they go is set by OTEL_*."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
