"""One line per saved session for ``agent sessions``: a quick read, no repair, no validation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Ending = Literal["done", "failed", "interrupted", "max_steps", "incomplete", "new"]
FIRST_PROMPT_LENGTH = 80


@dataclass(frozen=True)
class SessionSummary:
    """What the session table shows about one session.

    ``ended`` is the status of the last finished turn; ``incomplete`` when messages follow
    it (the agent stopped mid-turn, e.g. killed); ``new`` when nothing was said yet.
    """

    id: str
    path: Path
    cwd: str
    created: float
    updated: float
    first_prompt: str
    message_count: int
    ended: Ending
    error: str | None = None


def summarize(path: Path) -> SessionSummary | None:
    """The summary of the session file at ``path``; None if it has no readable header."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    header: dict[str, Any] | None = None
    updated = 0.0
    count = 0
    first_prompt = ""
    ended: Ending = "new"
    error: str | None = None
    for raw in data.split(b"\n"):
        record = _parse(raw)
        if record is None:
            if raw.strip():
                break
            continue
        if header is None:
            if record.get("type") != "header":
                return None
            header = record
        updated = max(updated, float(record.get("ts", 0.0)))
        kind = record.get("type")
        if kind == "message":
            count += 1
            ended, error = "incomplete", None
            if not first_prompt:
                first_prompt = _prompt_text(record.get("message", {}))
        elif kind == "turn_end":
            ended = record.get("status", "incomplete")
            error = record.get("error")
    if header is None:
        return None
    return SessionSummary(
        id=str(header.get("id", "")),
        path=path,
        cwd=str(header.get("cwd", "")),
        created=float(header.get("ts", 0.0)),
        updated=updated,
        first_prompt=first_prompt,
        message_count=count,
        ended=ended,
        error=error,
    )


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _prompt_text(message: dict[str, Any]) -> str:
    if message.get("role") != "user":
        return ""
    texts = [
        block.get("text", "")
        for block in message.get("content", [])
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    text = " ".join(" ".join(texts).split())
    return text if len(text) <= FIRST_PROMPT_LENGTH else text[: FIRST_PROMPT_LENGTH - 1] + "…"
