"""Configuration of `sessions` (the ``sessions:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SessionSettings(BaseModel):
    """Where and how sessions are stored."""

    model_config = ConfigDict(extra="forbid")
