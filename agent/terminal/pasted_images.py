"""Images the person pastes at the REPL prompt: Ctrl-V with an image on the clipboard, or an
image file's path (what a terminal pastes when a file is dropped on it).

Ctrl-V reads the clipboard with the platform's tool (`CLIPBOARD_TOOLS`: ``wl-paste`` on
Wayland, ``xclip`` on X11, ``pngpaste`` on macOS) and puts ``[Image #N]`` in the prompt; the
image goes with the prompt if that mark is still in it when Enter is pressed. Where no such
tool is installed, or the clipboard holds no image, the person is told why.

A pasted path is an absolute (or ``~``) path to an existing PNG, JPEG, GIF or WebP file,
possibly quoted or with ``\\ `` for its spaces; it stays in the text, and the image is sent
with it. Files the workspace's ``Read`` deny rules withhold are refused.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent.terminal.mentions import READ_TIMEOUT, Refused
from providers.messages import ImageBlock
from tools.base import ToolError
from tools.blocking import in_worker
from tools.images import MAX_FILE_BYTES, image_from_bytes, is_image_name, read_image

CLIPBOARD_TIMEOUT = 5.0
NO_TOOL = (
    "Ctrl-V: no clipboard tool found to read an image with. Install wl-clipboard (Wayland), "
    "xclip (X11) or pngpaste (macOS), or save the image and type @path."
)
MARK = "[Image #{number}]"
_MARKS = re.compile(r"\[Image #(\d+)\]")
_PASTED_PATH = re.compile(
    r"""(?:^|(?<=\s))(?:'(?P<single>[~/][^'\n]+)'|"(?P<double>[~/][^"\n]+)"|"""
    r"""(?P<bare>[~/](?:\\ |[^\s'"])+))"""
)


@dataclass(frozen=True)
class ClipboardTool:
    """A program that writes the clipboard's image to its output."""

    name: str
    argv: tuple[str, ...]
    when: Callable[[Mapping[str, str]], bool]


CLIPBOARD_TOOLS = (
    ClipboardTool(
        "wl-paste",
        ("wl-paste", "--no-newline", "--type", "image/png"),
        lambda env: bool(env.get("WAYLAND_DISPLAY")),
    ),
    ClipboardTool(
        "xclip",
        ("xclip", "-selection", "clipboard", "-target", "image/png", "-out"),
        lambda env: bool(env.get("DISPLAY")),
    ),
    ClipboardTool("pngpaste", ("pngpaste", "-"), lambda env: sys.platform == "darwin"),
)


class ClipboardError(Exception):
    """Why no image could be read from the clipboard (a sentence for the person)."""


def clipboard_image(environ: Mapping[str, str] = os.environ) -> ImageBlock:
    """The image on the clipboard, read with the first tool that fits this desktop.

    Raises:
        ClipboardError: no tool is installed, it failed, or the clipboard holds no image.
    """
    tools = [tool for tool in CLIPBOARD_TOOLS if tool.when(environ)]
    search = environ.get("PATH")
    found = [(tool, where) for tool in tools if (where := shutil.which(tool.name, path=search))]
    if not found:
        raise ClipboardError(NO_TOOL)
    tool, program = found[0]
    try:
        ran = subprocess.run(
            [program, *tool.argv[1:]],
            capture_output=True,
            timeout=CLIPBOARD_TIMEOUT,
            env=dict(environ),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ClipboardError(f"Ctrl-V: {tool.name} failed ({error}).") from None
    if ran.returncode != 0 or not ran.stdout:
        said = ran.stderr.decode(errors="replace").strip().splitlines()
        detail = f" ({tool.name}: {said[-1][:200]})" if said else ""
        raise ClipboardError(f"Ctrl-V: the clipboard holds no image{detail}.")
    if len(ran.stdout) > MAX_FILE_BYTES:
        raise ClipboardError("Ctrl-V: the clipboard's image is too large to send.")
    try:
        return image_from_bytes(ran.stdout, "clipboard image")
    except ToolError as error:
        raise ClipboardError(f"Ctrl-V: {error.message}") from None


@dataclass
class PastedImages:
    """The images pasted into the prompt being typed, by their ``[Image #N]`` mark."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    pasted: dict[int, ImageBlock] = field(default_factory=dict)
    count: int = 0

    def paste(self) -> tuple[str, str | None]:
        """Ctrl-V: the mark to insert and nothing to say, or no mark and why not."""
        try:
            image = clipboard_image(self.environ)
        except ClipboardError as error:
            return "", str(error)
        self.count += 1
        self.pasted[self.count] = image
        return MARK.format(number=self.count) + " ", None

    def take(self, text: str) -> list[ImageBlock]:
        """The pasted images whose mark is still in ``text``, in order; the rest are dropped."""
        marked = [int(found) for found in _MARKS.findall(text)]
        images = [self.pasted[number] for number in marked if number in self.pasted]
        self.pasted.clear()
        return images


def pasted_paths(text: str, refused: Refused | None = None) -> tuple[list[ImageBlock], list[str]]:
    """The images of the image files whose absolute paths are pasted in ``text``, and what
    stops any of them (a damaged image, a deny rule)."""
    images: list[ImageBlock] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for found in _PASTED_PATH.finditer(text):
        raw = found.group("single") or found.group("double") or found.group("bare")
        if found.group("bare"):  # a path at the end of a sentence: "see /tmp/a.png."
            raw = raw.replace("\\ ", " ").rstrip(".,;:!?)")
        if not is_image_name(raw):
            continue
        path = Path(raw).expanduser()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        why = refused(path.resolve()) if refused is not None else None
        if why is not None:
            problems.append(f"{raw}: {why}")
            continue
        try:
            images.append(read_image(path.resolve(), path.name))
        except ToolError as error:
            problems.append(error.message)
    return images, problems


async def pasted_paths_in(
    text: str, refused: Refused | None = None
) -> tuple[list[ImageBlock], list[str]]:
    """`pasted_paths` on a worker thread a timeout may abandon (a file on a hung mount)."""
    if "/" not in text:
        return [], []
    try:
        return await asyncio.wait_for(in_worker(pasted_paths, text, refused), READ_TIMEOUT)
    except TimeoutError:
        return [], [f"reading the pasted image paths took over {READ_TIMEOUT}s"]
