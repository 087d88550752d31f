"""One line per saved session for ``agent sessions``: a quick read, no repair.

Only each line's ``type`` and ``ts`` are validated, plus the header, the turn endings and the
first prompt in full: listing reads every line of every session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from providers.messages import TextBlock
from sessions.errors import SessionError
from sessions.loaded import SHELL_INPUT
from sessions.records import (
    Header,
    MessageRecord,
    Record,
    TurnEndRecord,
    TurnStatus,
    Unreadable,
    glance,
    parse_record,
)
from sessions.storage import read_file

DAMAGED_HEADER_CWD = "(unknown: header damaged)"
"""The directory listed for a session whose header line is damaged."""
Ending = TurnStatus | Literal["incomplete", "new"]
"""A finished turn's status, or what the listing says when no turn has finished last."""
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
    parent: str | None = None
    """A sub-agent's transcript: the session that started it."""


def started_in(summary: SessionSummary, directory: str) -> bool:
    """Whether the session was started in ``directory``, links resolved where possible (a
    session's directory may be long gone)."""
    return _resolved(summary.cwd) == _resolved(directory)


def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return path


def summarize(path: Path) -> SessionSummary | None:
    """The summary of the session file at ``path``; None if it is no session file (nothing
    readable, or a record with no header line before it).

    Never raises: damaged lines are skipped, as loading skips them; a damaged header line
    is stood in for, as loading rebuilds it.
    """
    try:
        data = read_file(path)
    except SessionError:
        return None
    header: Header | None = None
    updated = 0.0
    count = 0
    first_prompt = ""
    ended: Ending = "new"
    error: str | None = None
    first_damaged = False
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        seen = glance(raw)
        if header is None:
            record = parse_record(raw) if seen is not None else None
            if isinstance(record, Header):
                header = record
            elif seen is None or record is None or isinstance(record, Unreadable):
                first_damaged = True  # before any record: the header line; loading rebuilds it
                continue
            elif first_damaged:
                header = _stand_in(path, seen.ts)
                if header is None:
                    return None
            else:
                return None  # a record with no header line before it: not a session
        if seen is None:
            continue
        updated = max(updated, seen.ts)
        if seen.type == "message":
            count += 1
            ended, error = "incomplete", None
            if not first_prompt:
                first_prompt = _prompt_text(parse_record(raw))
        elif seen.type == "turn_end":
            record = parse_record(raw)
            if isinstance(record, TurnEndRecord):
                ended, error = record.status, record.error
    if header is None:
        return None
    return SessionSummary(
        id=header.id,
        path=path,
        cwd=header.cwd,
        created=header.ts,
        parent=header.parent,
        updated=updated,
        first_prompt=first_prompt,
        message_count=count,
        ended=ended,
        error=error,
    )


def _stand_in(path: Path, ts: float) -> Header | None:
    """The header `sessions.scan` rebuilds for a file whose header line is damaged (its
    directory unknown until the session is resumed somewhere); None for a file name that is
    no session id."""
    try:
        return Header(ts=ts, id=path.stem, cwd=DAMAGED_HEADER_CWD, model_chain=[])
    except ValueError:
        return None


def _prompt_text(record: Record | Unreadable) -> str:
    if not isinstance(record, MessageRecord) or record.message.role != "user":
        return ""
    texts = [block.text for block in record.message.content if isinstance(block, TextBlock)]
    text = " ".join(texts)
    if text.startswith(SHELL_INPUT):  # a ! run (`shell_run`): its command stands for it
        text = "! " + text[len(SHELL_INPUT) :].partition("</bash-input>")[0]
    else:  # what follows a blank line and a tag is attached (an @mention's file), not typed
        text = text.split("\n\n<", 1)[0]
    text = " ".join(text.split())
    return text if len(text) <= FIRST_PROMPT_LENGTH else text[: FIRST_PROMPT_LENGTH - 1] + "…"
