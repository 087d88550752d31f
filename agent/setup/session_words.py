"""What the person is told about a session's state: a resumed one's notices, and what of a
running one is not safely on disk."""

from __future__ import annotations

from sessions import LoadedSession, SessionWriter


def resume_notices(loaded: LoadedSession | None, model_notice: str | None) -> list[str]:
    """What the person should know about a resumed session: repairs, images that could not
    be restored, the model it used, and changed files."""
    if loaded is None:
        return []
    notices = list(loaded.warnings)
    if model_notice:
        notices.append(model_notice)
    if loaded.changed_files:
        changed = ", ".join(change.describe() for change in loaded.changed_files)
        notices.append(f"Changed since this session last saw them: {changed}")
    return notices


def save_failure(session: SessionWriter) -> str | None:
    """What of ``session`` is not safely on disk, and how to recover; None when all is."""
    failure, path, resume = session.failure, session.path, session.id
    if failure is None:
        return None
    if not session.unsaved:
        synced = "the disk did not confirm it"
        return f"Session may NOT be saved: {synced} ({failure}); then: agent --resume {resume}"
    return (
        f"Session NOT saved in full: {session.unsaved} record(s) not written "
        f"({failure}). {path} keeps what came before; once it can be written, "
        f"agent --resume {resume} goes on from there (ask the rest again)."
    )
