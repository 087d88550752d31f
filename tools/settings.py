"""Configuration of `tools` (the ``tools:`` section of the YAML config)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

BUILTIN_TOOL_NAMES = (
    *("read_file", "write_file", "edit_file", "list_files", "search", "run_command"),
    *("command_output", "kill_command"),
    "todo_write",
)
ADDED_TOOL_NAMES = ("task", "web_fetch", "web_search", "skill")
"""Tools the agent adds beside the built-in ones (sub-agents, the web, skills): ``enabled``
may name them too."""
MCP_PREFIX = "mcp__"


class ToolSettings(BaseModel):
    """Limits and safety settings of the coding tools."""

    model_config = ConfigDict(extra="forbid")

    enabled: list[str] | None = Field(
        default=None,
        description="Tools the model may call (null: all of them); e.g. a read-only set "
        "[read_file, list_files, search]. MCP tools by name or pattern: mcp__github__*.",
    )
    max_output_chars: int = Field(
        default=30_000,
        ge=1_000,
        description="Tool output longer than this is trimmed to its head and tail with a marker.",
    )
    command_timeout: float = Field(
        default=120.0,
        gt=0,
        description="Default seconds a run_command may take before its process group is killed.",
    )
    max_command_timeout: float = Field(
        default=600.0,
        gt=0,
        description="Upper bound for the timeout a model may ask for in one run_command call.",
    )
    file_tool_timeout: float = Field(
        default=30.0,
        gt=0,
        description="Seconds a file tool (read, write, edit, list, search) may take.",
    )
    max_retries: int = Field(
        default=2,
        ge=0,
        le=5,
        description="Retries of an idempotent tool after a transient failure.",
    )
    retry_backoff: float = Field(
        default=0.5,
        ge=0,
        description="Seconds before the first retry; doubled for each further retry.",
    )
    read_max_lines: int = Field(
        default=2_000,
        gt=0,
        description="Lines read_file returns when the model does not ask for a limit.",
    )
    max_list_entries: int = Field(
        default=1_000,
        gt=0,
        description="Paths list_files returns at most.",
    )
    max_search_matches: int = Field(
        default=500,
        gt=0,
        description="Matching lines search returns at most.",
    )
    repeated_failure_warn: int = Field(
        default=3,
        ge=2,
        description="After this many identical failing calls in a turn, the model is told to "
        "change approach.",
    )
    repeated_failure_limit: int = Field(
        default=5,
        ge=2,
        description="After this many identical failing calls in a turn, the loop ends the turn.",
    )
    repeated_call_warn: int = Field(
        default=2,
        ge=2,
        description="After this many identical calls with identical results in a turn, the "
        "model is told it already has that result.",
    )
    repeated_call_limit: int = Field(
        default=4,
        ge=2,
        description="After this many identical calls with identical results in a turn, the "
        "loop ends the turn (status repeated_call).",
    )

    snapshot_max_file_bytes: int = Field(
        default=2 * 1024 * 1024,
        ge=0,
        description="Files larger than this are not snapshotted before run_command, so a "
        "command's change to them cannot be undone.",
    )
    snapshot_max_total_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=0,
        description="Bytes of file copies one session may keep for /undo.",
    )
    snapshot_max_files: int = Field(
        default=20_000,
        ge=0,
        description="Files a snapshot before run_command looks at, at most.",
    )
    checkpoint_max_age_days: float = Field(
        default=30.0,
        gt=0,
        description="Checkpoints (copies kept for /undo) of sessions untouched this long "
        "are deleted; those of deleted sessions go at once.",
    )

    @field_validator("enabled")
    @classmethod
    def _check_enabled(cls, value: list[str] | None) -> list[str] | None:
        names = {name for name in value or () if not name.startswith(MCP_PREFIX)}
        known = (*BUILTIN_TOOL_NAMES, *ADDED_TOOL_NAMES)
        unknown = sorted(names - set(known))
        if unknown:
            raise ValueError(
                f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(known)}"
                f" or MCP tools ({MCP_PREFIX}<server>__<tool>, * allowed)"
            )
        return value

    @model_validator(mode="after")
    def _check_order(self) -> ToolSettings:
        if self.repeated_failure_limit < self.repeated_failure_warn:
            raise ValueError("repeated_failure_limit must be at least repeated_failure_warn")
        if self.repeated_call_limit < self.repeated_call_warn:
            raise ValueError("repeated_call_limit must be at least repeated_call_warn")
        if self.max_command_timeout < self.command_timeout:
            raise ValueError("max_command_timeout must be at least command_timeout")
        return self
