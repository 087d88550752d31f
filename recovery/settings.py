"""Configuration of `recovery` (the ``recovery:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RecoverySettings(BaseModel):
    """How model calls are retried, budgeted and failed over."""

    model_config = ConfigDict(extra="forbid")
