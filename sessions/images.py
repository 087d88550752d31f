"""The images of sessions, kept as content-addressed files under ``AGENT_HOME/images``.

A session line holds an image by reference (`providers.messages.ImageBlock` never
serialises its bytes): `ImageFiles.keep` writes each image once, as ``images/<sha256>``
(0700 directory, 0600 files, written to a temporary name, fsynced, then renamed), before the
record naming it; `ImageFiles.restore` puts the bytes back into a resumed conversation. An
image whose file is missing, or no longer matches its digest, becomes a note in its place,
and the person is told: the session resumes without it.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from providers.messages import Block, ImageBlock, Message, TextBlock, ToolResultBlock
from sessions.storage import storage_error

MISSING_NOTE = "[image {name} could not be restored: {why}]"
_MAX_BYTES = 64 * 1024 * 1024


class ImageFiles:
    """The content-addressed image files under ``directory`` (``AGENT_HOME/images``)."""

    def __init__(self, directory: Path, *, fsync: bool = True) -> None:
        self.directory = directory
        self._fsync = fsync

    def keep(self, messages: Iterable[Message]) -> None:
        """Make sure every image in ``messages`` has its file (written once per digest).

        Raises:
            sessions.SessionError: a file cannot be written (then neither is the record
                naming it).
        """
        for message in messages:
            for image in message.images:
                if image.data:
                    self._write(image)

    def _write(self, image: ImageBlock) -> None:
        path = self.directory / image.sha256
        if path.exists():
            return
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = path.with_name(f".{image.sha256}.{os.getpid()}.tmp")
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, base64.b64decode(image.data))
                if self._fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, path)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise storage_error("save image", path, error) from error

    def restore(self, messages: list[Message]) -> tuple[list[Message], list[str]]:
        """``messages`` with each image's bytes read back from its file, and what the person
        should be told about those that could not be (each replaced by a note)."""
        warnings: list[str] = []
        restored = [
            self._restored(message, warnings) if message.images else message for message in messages
        ]
        return restored, warnings

    def _restored(self, message: Message, warnings: list[str]) -> Message:
        content: list[Block] = []
        for block in message.content:
            if isinstance(block, ImageBlock):
                image = self._read(block, warnings)
                content.append(image if isinstance(image, ImageBlock) else _note(block, image))
            elif isinstance(block, ToolResultBlock) and block.images:
                images, notes = [], []
                for item in block.images:
                    image = self._read(item, warnings)
                    if isinstance(image, ImageBlock):
                        images.append(image)
                    else:
                        notes.append(_note(item, image).text)
                text = "\n".join([block.content, *notes])
                content.append(block.model_copy(update={"images": tuple(images), "content": text}))
            else:
                content.append(block)
        return Message(role=message.role, content=content)

    def _read(self, image: ImageBlock, warnings: list[str]) -> ImageBlock | str:
        """``image`` with its bytes, or why they could not be read (also told in ``warnings``)."""
        path = self.directory / image.sha256
        why = ""
        try:
            # Non-blocking, then checked: a FIFO planted at the path must not hang a resume.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                data = handle.read(_MAX_BYTES + 1)
        except FileNotFoundError:
            why = f"its copy {path} is missing"
        except OSError as error:
            why = f"its copy {path} cannot be read ({error.strerror or error})"
        else:
            if hashlib.sha256(data).hexdigest() != image.sha256:
                why = f"its copy {path} is damaged"
        if why:
            warnings.append(f"image {image.name}: {why}; the session goes on without it")
            return why
        return image.model_copy(update={"data": base64.b64encode(data).decode("ascii")})


def _note(image: ImageBlock, why: str) -> TextBlock:
    return TextBlock(text=MISSING_NOTE.format(name=image.name, why=why))
