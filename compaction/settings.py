"""Configuration of `compaction` (the ``compaction:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CompactionSettings(BaseModel):
    """When and how the conversation is compacted."""

    model_config = ConfigDict(extra="forbid")
