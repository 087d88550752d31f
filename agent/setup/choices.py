"""The values the command line's choice flags take, each as the person types it."""

from __future__ import annotations

from enum import StrEnum


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    stream_json = "stream-json"


class InputFormat(StrEnum):
    text = "text"
    stream_json = "stream-json"


class SandboxMode(StrEnum):
    workspace_write = "workspace-write"
    read_only = "read-only"
    off = "off"


class Approval(StrEnum):
    ask = "ask"
    auto_edit = "auto-edit"
    full_auto = "full-auto"


class PermissionMode(StrEnum):
    default = "default"
    accept_edits = "acceptEdits"
    plan = "plan"
    bypass_permissions = "bypassPermissions"
