"""``session/list``: the saved sessions an editor can load, newest first, a page at a time.

The same sessions as ``agent sessions`` (a damaged file is listed as loading would read it,
or left out when it is no session file). The cursor names the last session of the page
before (its time and id), so sessions saved while an editor pages never shift the pages.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo

from sessions import SessionError, SessionStore, SessionSummary, started_in

PAGE = 50
TITLE_CHARS = 120


def list_saved(home: Path, cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    """One page of the sessions under ``home`` (started in ``cwd``, when given).

    Raises:
        RequestError: a cursor this agent did not give out, or a sessions directory that
            cannot be read (the message says which).
    """
    try:
        saved = SessionStore(home).list()
    except (SessionError, OSError) as error:
        raise RequestError.internal_error({"sessions": str(error)}) from None
    if cwd is not None:
        saved = [summary for summary in saved if started_in(summary, cwd)]
    if cursor is not None:
        after = _position(cursor)
        saved = [summary for summary in saved if (summary.updated, summary.id) < after]
    page = saved[:PAGE]
    more = len(saved) > PAGE
    return ListSessionsResponse(
        sessions=[_info(summary) for summary in page],
        next_cursor=f"{page[-1].updated!r}/{page[-1].id}" if more else None,
    )


def _info(summary: SessionSummary) -> SessionInfo:
    title = " ".join(summary.first_prompt.split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1] + "…"
    updated = datetime.datetime.fromtimestamp(summary.updated, tz=datetime.UTC)
    return SessionInfo(
        session_id=summary.id,
        cwd=summary.cwd,
        title=title or None,
        updated_at=updated.isoformat().replace("+00:00", "Z"),
    )


def _position(cursor: str) -> tuple[float, str]:
    when, _, session_id = cursor.partition("/")
    try:
        return float(when), session_id
    except ValueError:
        raise RequestError.invalid_params(
            {"cursor": f"{cursor!r} is not a cursor from session/list; start without one"}
        ) from None
