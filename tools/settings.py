"""Configuration of `tools` (the ``tools:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolSettings(BaseModel):
    """Limits and safety settings of the coding tools."""

    model_config = ConfigDict(extra="forbid")
