"""Which session a start opens: a new one, ``--resume ID`` or ``--continue``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from agent.setup.startup import Options, SetupError
from providers.events import Event
from providers.models import ModelRef
from sessions import LoadedSession, SessionError, SessionStore, SessionWriter


class WorkspaceMoved(Event):
    """A resumed session was started in another directory: it works here now (files,
    commands and ``/undo`` apply to this directory, not to the one it was started in)."""

    type: Literal["workspace_moved"] = "workspace_moved"
    started_in: str
    workspace: str

    def describe(self) -> str:
        return (
            f"This session was started in {self.started_in}; it works in {self.workspace} now "
            "(files, commands and /undo apply here)."
        )


def moved_workspace(loaded: LoadedSession | None, workspace: Path) -> WorkspaceMoved | None:
    """The event for a resumed session started somewhere other than ``workspace``."""
    if loaded is None or loaded.header.cwd == str(workspace):
        return None
    return WorkspaceMoved(started_in=loaded.header.cwd, workspace=str(workspace))


def open_session(
    store: SessionStore, options: Options, chain: Sequence[ModelRef]
) -> tuple[LoadedSession | None, SessionWriter]:
    """The session ``options`` ask for, loaded (None for a new one) and open for writing.

    Raises:
        SetupError: there is no such session, or it cannot be opened; the message says why.
    """
    try:
        target = options.resume
        if options.continue_latest:
            target = store.latest_for(options.workspace)
            if target is None:
                raise SetupError(
                    f"No session to continue in {options.workspace}. "
                    "Start one with `agent`, or list them with `agent sessions --all`."
                )
        if target is None:
            refs = [str(ref) for ref in chain]
            return None, store.create(cwd=options.workspace, model_chain=refs)
        return store.open(target)
    except SessionError as error:
        raise SetupError(str(error)) from None


def naming_the_resumed_model(message: str, store: SessionStore, options: Options) -> str:
    """``message`` (no model can be used here), plus the model of the session being resumed
    and where it was started: that is the key or directory the person needs."""
    target = options.resume
    if target is None and options.continue_latest:
        target = store.latest_for(options.workspace)
    if target is None:
        return message
    try:
        loaded = store.load(target)
    except SessionError:
        return message  # opening it will say what is wrong with it
    started = loaded.header.cwd
    where = f", started in {started}" if started != str(options.workspace) else ""
    return f"{message}\nThe session being resumed used {loaded.model_state.current}{where}."
