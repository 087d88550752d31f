"""``AGENT_HOME`` is private: sessions, logs, history and checkpoints hold code and secrets.

`make_private` runs at start-up, before anything is written there: it creates the home and
the directories the agent keeps in it with mode 0700, and narrows directories and files left
too open by an older version or a loose umask. It never raises: a home that cannot be
created is reported, in one clear sentence, by whatever first needs it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import structlog

from tools import ToolSettings, prune_checkpoints

log = structlog.get_logger("agent.setup.home")

DIR_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_DIRS = ("sessions", "logs", "checkpoints")
PRIVATE_FILES = ("history",)


def make_private(home: Path) -> None:
    """Create ``home`` and its sessions, logs and checkpoints directories 0700; narrow the
    modes of those that exist, and of the history and log files, to 0700/0600."""
    with contextlib.suppress(OSError):
        home.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if not _is_personal_home(home):  # AGENT_HOME=~ must not lock others out of ~
        _narrow(home, DIR_MODE, follow=True)  # AGENT_HOME may be a link the person chose
    for name in PRIVATE_DIRS:
        directory = home / name
        with contextlib.suppress(OSError):
            directory.mkdir(exist_ok=True, mode=DIR_MODE)
        _narrow(directory, DIR_MODE)
    for name in PRIVATE_FILES:
        _narrow(home / name, FILE_MODE)
    with contextlib.suppress(OSError), os.scandir(home / "logs") as entries:
        for entry in entries:
            _narrow(Path(entry.path), FILE_MODE)


def _narrow(path: Path, mode: int, *, follow: bool = False) -> None:
    """Take group and other permissions off ``path`` if it is ours and of the expected kind.

    Symlinks are left alone (except the home itself): a link in the home must not make
    the agent change the mode of whatever it points at.
    """
    try:
        info = path.stat() if follow else path.lstat()
        expected = stat.S_ISDIR if mode == DIR_MODE else stat.S_ISREG
        if not expected(info.st_mode) or info.st_uid != os.geteuid():
            return
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077 & 0o777)
    except OSError:
        return


def _is_personal_home(path: Path) -> bool:
    try:
        return path.resolve() == Path.home().resolve()
    except (OSError, RuntimeError):
        return False


def scratch_dir(home: Path) -> Path | None:
    """A directory commands may write besides the workspace (created 0700); None if it
    cannot be made (commands then write only the workspace and the temp dir)."""
    scratch = home / "scratch"
    try:
        scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        log.warning("scratch_dir_unavailable", path=str(scratch), reason=str(error))
        return None
    return scratch


def prune_undo_copies(home: Path, sessions: Path, keep: str, settings: ToolSettings) -> None:
    """Drop the undo copies of deleted sessions and of sessions untouched for too long.

    Raises:
        OSError: the checkpoint directory cannot be read or changed.
    """
    prune_checkpoints(
        home / "checkpoints",
        keep=keep,
        session_exists=lambda sid: (sessions / f"{sid}.jsonl").exists(),
        max_age=settings.checkpoint_max_age_days * 86_400,
    )
