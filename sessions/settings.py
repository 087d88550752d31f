"""Configuration of `sessions` (the ``sessions:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SessionSettings(BaseModel):
    """Where and how sessions are stored."""

    model_config = ConfigDict(extra="forbid")

    fsync: bool = Field(
        default=True,
        description="fsync records (once per agent step); off trades power-cut safety for speed",
    )
    redact_env: list[str] = Field(
        default_factory=list,
        description="more environment variables whose values are hidden from sessions and logs",
    )
    hash_limit_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=0,
        description="files larger than this are checked for changes by size and mtime only",
    )
