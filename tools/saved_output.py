"""The whole output of a command too long for the model, kept in a file it can read from.

The model sees the head and tail of a long output; the cut's marker names this file, so the
model can ``sed -n`` or ``grep`` the part it needs instead of running the command again. The
file is written redacted, line by line as the output arrives (no secret is ever on disk),
is private (0600, in a 0700 directory under AGENT_HOME, which commands can read but not
write: a command cannot plant a link there), stops at `SAVE_LIMIT` bytes, only the newest
`KEEP_FILES` of a session are kept, and a session's are removed once it is old
(`prune_saved_outputs`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from tools.text import decode

log = structlog.get_logger("tools")

SAVE_LIMIT = 16 * 1024 * 1024
"""Bytes of one command's output kept on disk; the rest is left out (and said so)."""
KEEP_FILES = 10
"""Saved outputs kept per directory (one session's); older ones are removed."""
_LONGEST_LINE = 64 * 1024
"""A line longer than this is redacted and written in pieces."""


class SavedOutput:
    """A file that receives a command's output once it is too long for the model.

    Args:
        directory: Where to keep it (created 0700); None keeps nothing.
        redact: Hides secrets in each line before it is written.
    """

    def __init__(self, directory: Path | None, redact: Callable[[str], str]) -> None:
        self._directory = directory
        self._redact = redact
        self._fd: int | None = None
        self._path: Path | None = None
        self._pending = b""
        self._written = 0
        self.truncated = False
        """Whether the output went on past `SAVE_LIMIT`."""

    @property
    def path(self) -> Path | None:
        """The file, once something was written to it."""
        return self._path

    def start(self, first: bytes) -> None:
        """Open the file with the output so far; a failure only means nothing is saved."""
        if self._directory is None or self._fd is not None:
            return
        try:
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix="command-", suffix=".txt", dir=self._directory)
        except OSError as error:
            log.warning("output_not_saved", directory=str(self._directory), reason=str(error))
            self._directory = None
            return
        self._fd, self._path = fd, Path(name)
        self.add(first)

    def add(self, chunk: bytes) -> None:
        """Write the complete lines of what came so far (redacted)."""
        if self._fd is None or self.truncated:
            return
        data = self._pending + chunk
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) > _LONGEST_LINE:
            end = len(data)
        self._pending = data[end:]
        self._write(data[:end])

    def close(self, *, keep: bool) -> Path | None:
        """Finish the file; keep it (returning its path) or remove it."""
        if self._fd is None or self._path is None:
            return None
        if keep and self._pending:
            self._write(self._pending)
        self._pending = b""
        os.close(self._fd)
        self._fd = None
        if not keep:
            self._path.unlink(missing_ok=True)
            return None
        _prune(self._path.parent)
        return self._path

    def _write(self, data: bytes) -> None:
        if not data or self._fd is None:
            return
        text = self._redact(decode(data)).encode("utf-8")
        room = SAVE_LIMIT - self._written
        if len(text) > room:
            text, self.truncated = text[:room], True
        try:
            os.write(self._fd, text)
        except OSError as error:
            log.warning("output_not_saved", path=str(self._path), reason=str(error))
            self.truncated = True
            return
        self._written += len(text)


def _prune(directory: Path) -> None:
    """Remove all but the newest `KEEP_FILES` saved outputs in ``directory``."""
    with contextlib.suppress(OSError):
        files = sorted(directory.glob("command-*.txt"), key=lambda p: p.stat().st_mtime)
        for old in files[:-KEEP_FILES]:
            old.unlink(missing_ok=True)


def prune_saved_outputs(root: Path, *, keep: str, max_age: float) -> None:
    """Remove the saved outputs of sessions (directories under ``root``) other than ``keep``
    untouched for ``max_age`` seconds."""
    with contextlib.suppress(OSError):
        for session in root.iterdir():
            if session.name == keep or session.is_symlink() or not session.is_dir():
                continue
            if time.time() - session.stat().st_mtime > max_age:
                for saved in session.glob("command-*.txt"):
                    saved.unlink(missing_ok=True)
                session.rmdir()
