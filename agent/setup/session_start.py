"""Which session a start opens: a new one, ``--resume ID`` or ``--continue``."""

from __future__ import annotations

from collections.abc import Sequence

from agent.setup.startup import Options, SetupError
from providers.models import ModelRef
from sessions import LoadedSession, SessionError, SessionStore, SessionWriter


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
