"""Durable, crash-safe, resumable sessions stored as append-only JSONL.

`SessionStore` creates, opens (locked, one writer per session), loads and lists sessions;
`SessionWriter` appends fsynced records; `LoadedSession` is what a resume continues from;
`Redactor` hides secrets from sessions and (as a structlog processor) from logs.
"""

from sessions.errors import AmbiguousSession, SessionError, SessionLocked, SessionNotFound
from sessions.files import FileChange
from sessions.listing import SessionSummary, started_in
from sessions.loaded import LoadedSession, ModelState, is_shell_run, shell_run
from sessions.records import TurnStatus
from sessions.redact import Redactor
from sessions.repair import history_problems, repair_history
from sessions.settings import SessionSettings
from sessions.store import SessionStore
from sessions.writer import SessionWriter

__all__ = [
    "AmbiguousSession",
    "FileChange",
    "LoadedSession",
    "ModelState",
    "Redactor",
    "SessionError",
    "SessionLocked",
    "SessionNotFound",
    "SessionSettings",
    "SessionStore",
    "SessionSummary",
    "SessionWriter",
    "TurnStatus",
    "history_problems",
    "is_shell_run",
    "repair_history",
    "shell_run",
    "started_in",
]
